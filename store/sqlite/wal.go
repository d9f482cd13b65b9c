package sqlite

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// The WAL file's format (https://sqlite.org/fileformat.html#the_write_ahead_log):
// a 32-byte header, then frames of a 24-byte header and one page each.
const (
	walHeaderSize      = 32
	walFrameHeaderSize = 24
	walMagic           = 0x377f0682 // | 1: the checksums read big-endian words
)

// checkWAL reads path's WAL, if it has one, as SQLite's recovery would
// before it applies it, and returns a problem (in words: what is wrong,
// and what to do) when the WAL is damaged: SQLite would keep the frames
// before the damage and drop the rest without a word, commits a host had
// acknowledged among them. It is damaged when its header's checksum is
// wrong with frames after it, when a frame of its current run (its salts
// are the header's) is cut short, or when a frame's checksum is wrong and
// a commit of its current run follows it. Frames of an earlier run
// (other salts), which SQLite leaves behind as it starts the WAL over,
// and an unfinished transaction at the end (a host that died while it
// wrote) are not damage. frames is how many frames SQLite would apply.
//
// Nothing in SQLite's own checks (integrity_check reads the database as
// the WAL left it) can see this: once the WAL is applied, the frames it
// dropped are gone.
func checkWAL(path string) (frames int, problem string, err error) {
	name := path + "-wal"
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("sqlite: open %s: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, "", fmt.Errorf("sqlite: read %s: %w", name, err)
	}
	size := fi.Size()
	r := bufio.NewReaderSize(f, 1<<16)
	var hdr [walHeaderSize]byte
	switch n, err := io.ReadFull(r, hdr[:]); {
	case n == 0:
		return 0, "", nil // empty: SQLite starts it anew
	case errors.Is(err, io.ErrUnexpectedEOF):
		return 0, fmt.Sprintf("its WAL (%s) is %d bytes, shorter than a WAL's header: it was cut short, and every commit in it is lost; restore the database from a backup", name, size), nil
	case err != nil:
		return 0, "", fmt.Errorf("sqlite: read %s: %w", name, err)
	}
	be := binary.BigEndian
	magic, pageSize := be.Uint32(hdr[0:]), be.Uint32(hdr[8:])
	if magic&^1 != walMagic || pageSize < 512 || pageSize > 65536 || pageSize&(pageSize-1) != 0 {
		return 0, fmt.Sprintf("its WAL (%s) does not begin with a WAL's header: it was overwritten, and every commit in it is lost; restore the database from a backup", name), nil
	}
	var order binary.ByteOrder = binary.LittleEndian
	if magic&1 == 1 {
		order = binary.BigEndian
	}
	s0, s1 := walChecksum(order, hdr[:24], 0, 0)
	if s0 != be.Uint32(hdr[24:]) || s1 != be.Uint32(hdr[28:]) {
		if size == walHeaderSize {
			return 0, "", nil
		}
		return 0, fmt.Sprintf("its WAL (%s) has a damaged header (its checksum is wrong): SQLite would drop the %d bytes of commits after it; restore the database from a backup", name, size-walHeaderSize), nil
	}
	salts := hdr[16:24]
	frame := make([]byte, walFrameHeaderSize+int(pageSize))
	valid, lastCommit, broken := 0, 0, -1
	for i := 0; ; i++ {
		n, err := io.ReadFull(r, frame)
		if n == 0 {
			return valid, "", nil
		}
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, "", fmt.Errorf("sqlite: read %s: %w", name, err)
		}
		current := n > 8 && string(frame[8:min(n, 16)]) == string(salts[:min(n, 16)-8])
		if n < len(frame) {
			if !current && n > 8 {
				return valid, "", nil // the end of an earlier run, cut where SQLite limited the file
			}
			return valid, cutShort(name, i, lastCommit, pageSize, size), nil
		}
		commit := be.Uint32(frame[4:]) != 0
		if broken < 0 {
			if current {
				s0, s1 = walChecksum(order, frame[:8], s0, s1)
				s0, s1 = walChecksum(order, frame[walFrameHeaderSize:], s0, s1)
			}
			if current && s0 == be.Uint32(frame[16:]) && s1 == be.Uint32(frame[20:]) {
				valid = i + 1
				if commit {
					lastCommit = i + 1
				}
				continue
			}
			broken = i
			continue
		}
		if current && commit {
			return valid, fmt.Sprintf("its WAL (%s) has a damaged frame (frame %d's checksum is wrong) before commits that follow it (frame %d ends one): "+
				"SQLite would keep the commits before the damage and drop those after it without a word; restore the database from a backup, or, to keep the database "+
				"as it was before the damage and lose the commits after it, truncate %s to %d bytes", name, broken+1, i+1, name, walOffset(lastCommit, pageSize)), nil
		}
	}
}

// cutShort is the problem of a WAL whose frame i is cut short.
func cutShort(name string, i, lastCommit int, pageSize uint32, size int64) string {
	return fmt.Sprintf("its WAL (%s) ends in the middle of frame %d (it is %d bytes): the file was cut short, and the commits in it that were cut are lost; "+
		"restore the database from a backup, or, to keep the commits before the cut (SQLite would keep those and nothing after them), truncate %s to %d bytes",
		name, i+1, size, name, walOffset(lastCommit, pageSize))
}

// walOffset is where frame i+1 begins: the size of a WAL of i frames.
func walOffset(i int, pageSize uint32) int64 {
	return walHeaderSize + int64(i)*(walFrameHeaderSize+int64(pageSize))
}

// walChecksum continues the checksum s0, s1 over b, whose length is a
// multiple of 8, as SQLite computes it.
func walChecksum(order binary.ByteOrder, b []byte, s0, s1 uint32) (uint32, uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}
