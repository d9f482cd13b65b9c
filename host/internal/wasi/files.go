package wasi

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"
)

// The files of an activity's scratch directory (Scratch): the preopened
// directory ScratchPath is fd 3, and the files and directories the guest
// opens in it get fds past it. An orchestration, and an activity whose
// host gives it no scratch space, have no preopen: every path answers
// ENOTCAPABLE and every fd past stdio EBADF, as they always did.

// OfferScratch gives a real environment the preopened directory
// ScratchPath (fd 3), whose files are those of the Scratch of the attempt
// it runs (SetScratch). A Go guest looks for its preopens once, as it
// starts, so it is called before the instance starts. A deterministic
// environment ignores it: an orchestration has no files.
func (e *Env) OfferScratch() {
	if !e.deterministic {
		e.preopen = true
	}
}

// SetScratch gives an environment that OfferScratch made the scratch
// directory of the attempt it runs (nil: none, and the paths in
// ScratchPath answer ENOTCAPABLE). The caller closes it once the attempt
// ends.
func (e *Env) SetScratch(s *Scratch) {
	if e.preopen {
		e.scratch = s
	}
}

// newFd returns an fd that no file of the instance had before.
func (e *Env) newFd() uint32 {
	e.lastFd = max(e.lastFd, scratchFd) + 1
	return e.lastFd
}

// lockScratch returns the attempt's scratch directory, locked, or the
// errno of a path call without one.
func (e *Env) lockScratch() (*Scratch, Errno) {
	s := e.scratch
	if s == nil {
		return nil, ENOTCAPABLE
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, EBADF
	}
	return s, ESUCCESS
}

// lockFile returns the attempt's scratch directory, locked, and its file
// fd (fd 3 is the directory itself, opened on first use), or the errno of
// an fd call on an fd that is none of them.
func (e *Env) lockFile(fd uint64) (*Scratch, *scratchFile, Errno) {
	s := e.scratch
	if s == nil {
		return nil, nil, EBADF
	}
	s.mu.Lock()
	f, errno := s.file(uint32(fd))
	if errno != ESUCCESS {
		s.mu.Unlock()
		return nil, nil, errno
	}
	return s, f, ESUCCESS
}

// file returns the open file fd.
func (s *Scratch) file(fd uint32) (*scratchFile, Errno) {
	if s.closed {
		return nil, EBADF
	}
	if f, ok := s.files[fd]; ok {
		return f, ESUCCESS
	}
	if fd != scratchFd {
		return nil, EBADF
	}
	root, errno := s.open()
	if errno != ESUCCESS {
		return nil, errno
	}
	d, err := root.Open(".")
	if err != nil {
		return nil, errnoOf(err)
	}
	f := &scratchFile{f: d, name: ".", dir: true}
	s.files[fd] = f
	return f, ESUCCESS
}

// base returns the name of the directory fd, from which a path call
// resolves its path.
func (s *Scratch) base(fd uint64) (string, Errno) {
	if uint32(fd) == scratchFd {
		return ".", ESUCCESS
	}
	f, ok := s.files[uint32(fd)]
	switch {
	case !ok:
		return "", EBADF
	case !f.dir:
		return "", ENOTDIR
	}
	return f.name, ESUCCESS
}

// name reads the path of a path call at (fd, addr, n) and returns the
// name it means in the scratch directory.
func (s *Scratch) name(m Memory, fd uint64, addr, n uint64) (string, Errno) {
	base, errno := s.base(fd)
	if errno != ESUCCESS {
		return "", errno
	}
	p, ok := m.Read(uint32(addr), uint32(n))
	if !ok {
		return "", EFAULT
	}
	return scratchName(base, p)
}

// The flags of path_open and the rights it reads.
const (
	oflagCreate    = 1
	oflagDirectory = 2
	oflagExcl      = 4
	oflagTrunc     = 8
	fdflagAppend   = 1
	rightFdRead    = 1 << 1
	rightFdWrite   = 1 << 6
)

// The file types of a filestat and a dirent.
const (
	fileTypeUnknown   = 0
	fileTypeDirectory = 3
	fileTypeRegular   = 4
	fileTypeSymlink   = 7
)

// pathOpen opens a file or directory of the scratch directory: with
// create, excl, trunc and directory, for reading, writing or both (from
// the rights asked for), appending or not.
func pathOpen(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	s, errno := e.lockScratch()
	if errno != ESUCCESS {
		return errno
	}
	defer s.mu.Unlock()
	name, errno := s.name(m, a[0], a[2], a[3])
	if errno != ESUCCESS {
		return errno
	}
	oflags, rights, fdflags := uint32(a[4]), a[5], uint32(a[7])
	if len(s.files) >= MaxScratchOpen {
		return EMFILE
	}
	root, errno := s.open()
	if errno != ESUCCESS {
		return errno
	}
	info, err := root.Lstat(name)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errnoOf(err)
	}
	write := rights&rightFdWrite != 0
	switch {
	case exists && oflags&oflagCreate != 0 && oflags&oflagExcl != 0:
		return EEXIST
	case !exists && (oflags&oflagCreate == 0 || oflags&oflagDirectory != 0):
		return ENOENT
	case exists && !info.IsDir() && oflags&oflagDirectory != 0:
		return ENOTDIR
	case exists && info.IsDir() && (write || oflags&(oflagCreate|oflagTrunc) != 0):
		return EISDIR
	}
	f := &scratchFile{name: name, dir: exists && info.IsDir(), append: fdflags&fdflagAppend != 0}
	if f.dir {
		f.f, err = root.Open(name)
	} else {
		flag := os.O_RDONLY
		switch read := rights&rightFdRead != 0; {
		case read && write:
			flag = os.O_RDWR
		case write:
			flag = os.O_WRONLY
		}
		if oflags&oflagCreate != 0 {
			flag |= os.O_CREATE
		}
		if oflags&oflagExcl != 0 {
			flag |= os.O_EXCL
		}
		if oflags&oflagTrunc != 0 {
			flag |= os.O_TRUNC
		}
		if f.append {
			flag |= os.O_APPEND
		}
		if !exists {
			if errno := s.add(); errno != ESUCCESS {
				return errno
			}
		}
		f.f, err = root.OpenFile(name, flag, 0o600)
		switch {
		case err != nil && !exists:
			s.entries--
		case err == nil && exists && flag&os.O_TRUNC != 0:
			s.used = max(s.used-info.Size(), 0)
		}
	}
	if err != nil {
		return errnoOf(err)
	}
	fd := e.newFd()
	if !putU32(m, uint32(a[8]), fd) {
		f.f.Close()
		return EFAULT
	}
	s.files[fd] = f
	return ESUCCESS
}

// pathCreateDirectory makes a directory.
func pathCreateDirectory(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	return onPath(e, m, a[0], a[1], a[2], func(s *Scratch, root *os.Root, name string) Errno {
		if errno := s.add(); errno != ESUCCESS {
			return errno
		}
		if err := root.Mkdir(name, 0o700); err != nil {
			s.entries--
			return errnoOf(err)
		}
		return ESUCCESS
	})
}

// pathRemoveDirectory removes an empty directory.
func pathRemoveDirectory(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	return onEntry(e, m, a[0], a[1], a[2], func(s *Scratch, root *os.Root, name string, info fs.FileInfo) Errno {
		if !info.IsDir() {
			return ENOTDIR
		}
		return s.remove(root, name, 0)
	})
}

// pathUnlinkFile removes a file, which gives its bytes back to the budget.
func pathUnlinkFile(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	return onEntry(e, m, a[0], a[1], a[2], func(s *Scratch, root *os.Root, name string, info fs.FileInfo) Errno {
		if info.IsDir() {
			return EISDIR
		}
		return s.remove(root, name, info.Size())
	})
}

// remove removes the entry name, which held size bytes.
func (s *Scratch) remove(root *os.Root, name string, size int64) Errno {
	if err := root.Remove(name); err != nil {
		return errnoOf(err)
	}
	s.forget(size)
	return ESUCCESS
}

// pathFilestatGet describes a file or directory. The scratch directory
// itself is described without being made, so that a guest can look for
// it (durabox.ScratchDir) at no cost.
func pathFilestatGet(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	s, errno := e.lockScratch()
	if errno != ESUCCESS {
		return errno
	}
	defer s.mu.Unlock()
	name, errno := s.name(m, a[0], a[2], a[3])
	if errno != ESUCCESS {
		return errno
	}
	if name == "." && s.root == nil && s.err == nil {
		var st [64]byte
		st[16] = fileTypeDirectory
		binary.LittleEndian.PutUint64(st[24:], 1)
		return fault(m.Write(uint32(a[4]), st[:]))
	}
	root, errno := s.open()
	if errno != ESUCCESS {
		return errno
	}
	info, err := root.Lstat(name)
	if err != nil {
		return errnoOf(err)
	}
	return writeFilestat(m, uint32(a[4]), info)
}

// pathRename renames a file or directory within the scratch directory; a
// file it replaces gives its bytes back to the budget.
func pathRename(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	s, errno := e.lockScratch()
	if errno != ESUCCESS {
		return errno
	}
	defer s.mu.Unlock()
	from, errno := s.name(m, a[0], a[1], a[2])
	if errno != ESUCCESS {
		return errno
	}
	to, errno := s.name(m, a[3], a[4], a[5])
	switch {
	case errno != ESUCCESS:
		return errno
	case from == "." || to == ".":
		return EBUSY
	}
	root, errno := s.open()
	if errno != ESUCCESS {
		return errno
	}
	replaced, missing := root.Lstat(to)
	if err := root.Rename(from, to); err != nil {
		return errnoOf(err)
	}
	if missing == nil {
		size := int64(0)
		if !replaced.IsDir() {
			size = replaced.Size()
		}
		s.forget(size)
	}
	return ESUCCESS
}

// onPath runs f on the name a path call at (fd, addr, n) means, in the
// scratch directory, which it makes if it is not yet.
func onPath(e *Env, m Memory, fd, addr, n uint64, f func(s *Scratch, root *os.Root, name string) Errno) Errno {
	s, errno := e.lockScratch()
	if errno != ESUCCESS {
		return errno
	}
	defer s.mu.Unlock()
	name, errno := s.name(m, fd, addr, n)
	switch {
	case errno != ESUCCESS:
		return errno
	case name == ".":
		return EBUSY
	}
	root, errno := s.open()
	if errno != ESUCCESS {
		return errno
	}
	return f(s, root, name)
}

// onEntry runs f on an entry that exists, as onPath does.
func onEntry(e *Env, m Memory, fd, addr, n uint64, f func(s *Scratch, root *os.Root, name string, info fs.FileInfo) Errno) Errno {
	return onPath(e, m, fd, addr, n, func(s *Scratch, root *os.Root, name string) Errno {
		info, err := root.Lstat(name)
		if err != nil {
			return errnoOf(err)
		}
		return f(s, root, name, info)
	})
}

// writeFilestat writes the filestat of info at addr: its type, size and
// times (all three the modification time); device and inode are zero.
func writeFilestat(m Memory, addr uint32, info fs.FileInfo) Errno {
	var st [64]byte
	st[16] = fileType(info.Mode())
	binary.LittleEndian.PutUint64(st[24:], 1)
	binary.LittleEndian.PutUint64(st[32:], uint64(info.Size()))
	t := uint64(info.ModTime().UnixNano())
	for _, at := range []int{40, 48, 56} {
		binary.LittleEndian.PutUint64(st[at:], t)
	}
	return fault(m.Write(addr, st[:]))
}

func fileType(mode fs.FileMode) byte {
	switch {
	case mode.IsDir():
		return fileTypeDirectory
	case mode.IsRegular():
		return fileTypeRegular
	case mode&fs.ModeSymlink != 0:
		return fileTypeSymlink
	}
	return fileTypeUnknown
}

// The calls on the fd of a scratch file or directory, which fd.go's
// answer for stdio and any other fd.

// scratchClose closes a file; the scratch directory itself stays open.
func scratchClose(e *Env, fd uint64) Errno {
	if uint32(fd) == scratchFd && e.preopen {
		return ENOTSUP
	}
	s, f, errno := e.lockFile(fd)
	if errno != ESUCCESS {
		return errno
	}
	defer s.mu.Unlock()
	delete(s.files, uint32(fd))
	return errnoOf(f.f.Close())
}

// scratchFdstat describes a file as a regular file, or a directory, with
// every right; append is its one flag.
func scratchFdstat(e *Env, m Memory, fd uint64, addr uint32) Errno {
	typ, flags := byte(fileTypeDirectory), uint16(0)
	if uint32(fd) != scratchFd || !e.preopen {
		s, f, errno := e.lockFile(fd)
		if errno != ESUCCESS {
			return errno
		}
		defer s.mu.Unlock()
		if !f.dir {
			typ = fileTypeRegular
		}
		if f.append {
			flags = fdflagAppend
		}
	}
	var stat [24]byte
	stat[0] = typ
	binary.LittleEndian.PutUint16(stat[2:], flags)
	binary.LittleEndian.PutUint64(stat[8:], ^uint64(0))
	binary.LittleEndian.PutUint64(stat[16:], ^uint64(0))
	return fault(m.Write(addr, stat[:]))
}

func scratchFilestat(e *Env, m Memory, fd uint64, addr uint32) Errno {
	s, f, errno := e.lockFile(fd)
	if errno != ESUCCESS {
		return errno
	}
	defer s.mu.Unlock()
	info, err := f.f.Stat()
	if err != nil {
		return errnoOf(err)
	}
	return writeFilestat(m, addr, info)
}

// scratchSetSize truncates or extends a file, within the budget.
func scratchSetSize(e *Env, fd uint64, size uint64) Errno {
	s, f, errno := e.lockFile(fd)
	if errno != ESUCCESS {
		return errno
	}
	defer s.mu.Unlock()
	if f.dir {
		return EISDIR
	}
	info, err := f.f.Stat()
	if err != nil {
		return errnoOf(err)
	}
	if size > math.MaxInt64 {
		return EFBIG
	}
	if errno := s.grow(int64(size) - info.Size()); errno != ESUCCESS {
		return errno
	}
	if err := f.f.Truncate(int64(size)); err != nil {
		s.grow(info.Size() - int64(size))
		return errnoOf(err)
	}
	return ESUCCESS
}

// scratchWrite writes the iovecs at (addr, n) to a file, at offset (at
// its end when it appends), or at its position when offset is negative;
// it answers ENOSPC, writing nothing, when what the file would grow by is
// past the budget.
func scratchWrite(e *Env, m Memory, fd uint64, addr, n uint32, offset int64, written uint32) Errno {
	s, f, errno := e.lockFile(fd)
	if errno != ESUCCESS {
		return errno
	}
	defer s.mu.Unlock()
	if f.dir {
		return EISDIR
	}
	vecs, ok := iovecs(m, addr, n)
	if !ok {
		return EFAULT
	}
	var b []byte
	for _, v := range vecs {
		p, ok := m.Read(v[0], v[1])
		if !ok {
			return EFAULT
		}
		b = append(b, p...)
	}
	info, err := f.f.Stat()
	if err != nil {
		return errnoOf(err)
	}
	at := offset
	switch {
	case f.append:
		at = info.Size()
	case offset < 0:
		if at, err = f.f.Seek(0, io.SeekCurrent); err != nil {
			return errnoOf(err)
		}
	}
	charged := max(at+int64(len(b))-info.Size(), 0)
	if errno := s.grow(charged); errno != ESUCCESS {
		return errno
	}
	var k int
	if offset < 0 {
		k, err = f.f.Write(b)
	} else {
		k, err = f.f.WriteAt(b, offset)
	}
	if err != nil {
		// Charge what the file grew by, not what it would have.
		s.grow(-charged)
		if now, statErr := f.f.Stat(); statErr == nil {
			s.grow(max(now.Size()-info.Size(), 0))
		}
		return errnoOf(err)
	}
	return fault(putU32(m, written, uint32(k)))
}

// scratchRead reads a file into the iovecs at (addr, n), from offset, or
// from its position when offset is negative; at its end it reads 0 bytes.
func scratchRead(e *Env, m Memory, fd uint64, addr, n uint32, offset int64, read uint32) Errno {
	s, f, errno := e.lockFile(fd)
	if errno != ESUCCESS {
		return errno
	}
	defer s.mu.Unlock()
	if f.dir {
		return EISDIR
	}
	vecs, ok := iovecs(m, addr, n)
	if !ok {
		return EFAULT
	}
	total := uint32(0)
	for _, v := range vecs {
		if _, ok := m.Read(v[0], v[1]); !ok {
			return EFAULT
		}
		b := make([]byte, v[1])
		var k int
		var err error
		if offset < 0 {
			k, err = io.ReadFull(f.f, b)
		} else {
			k, err = f.f.ReadAt(b, offset+int64(total))
		}
		m.Write(v[0], b[:k])
		total += uint32(k)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return errnoOf(err)
		}
		if k < len(b) {
			break
		}
	}
	return fault(putU32(m, read, total))
}

// scratchSeek moves a file's position, and writes the new one at to.
func scratchSeek(e *Env, m Memory, fd uint64, offset int64, whence uint32, to uint32) Errno {
	s, f, errno := e.lockFile(fd)
	if errno != ESUCCESS {
		return errno
	}
	defer s.mu.Unlock()
	if whence > io.SeekEnd {
		return EINVAL
	}
	pos, err := f.f.Seek(offset, int(whence))
	if err != nil {
		return errnoOf(err)
	}
	return fault(putU64(m, to, uint64(pos)))
}

// scratchReaddir lists a directory from cookie (the index of its first
// entry, by name) into the buffer at (addr, n), as WASI's dirents: a
// buffer that is full may end in a cut entry, which the guest reads
// again from its cookie.
func scratchReaddir(e *Env, m Memory, fd uint64, addr, n uint32, cookie uint64, used uint32) Errno {
	s, f, errno := e.lockFile(fd)
	if errno != ESUCCESS {
		return errno
	}
	defer s.mu.Unlock()
	if !f.dir {
		return ENOTDIR
	}
	if cookie == 0 || f.listing == nil {
		d, err := s.root.Open(f.name)
		if err != nil {
			return errnoOf(err)
		}
		f.listing, err = d.ReadDir(-1)
		d.Close()
		if err != nil {
			return errnoOf(err)
		}
		slices.SortFunc(f.listing, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
	var out []byte
	for i := cookie; i < uint64(len(f.listing)) && len(out) < int(n); i++ {
		entry := f.listing[i]
		out = binary.LittleEndian.AppendUint64(out, i+1)
		out = binary.LittleEndian.AppendUint64(out, 0)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(entry.Name())))
		out = append(out, fileType(entry.Type()), 0, 0, 0)
		out = append(out, entry.Name()...)
	}
	out = out[:min(len(out), int(n))]
	if !m.Write(addr, out) {
		return EFAULT
	}
	return fault(putU32(m, used, uint32(len(out))))
}

// isScratchFd reports whether fd is the scratch directory or one of its
// open files.
func (e *Env) isScratchFd(fd uint64) bool {
	if uint32(fd) == scratchFd && e.preopen {
		return true
	}
	s := e.scratch
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.files[uint32(fd)]
	return ok && !s.closed
}

// fdPrestatGet describes the preopened scratch directory, fd 3, in an
// activity's instance: every other fd is EBADF, which ends the guest's
// search for preopens.
func fdPrestatGet(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	if uint32(a[0]) != scratchFd || !e.preopen {
		return EBADF
	}
	var prestat [8]byte
	binary.LittleEndian.PutUint32(prestat[4:], uint32(len(ScratchPath)))
	return fault(m.Write(uint32(a[1]), prestat[:]))
}

// fdPrestatDirName writes the name of the preopened scratch directory.
func fdPrestatDirName(_ context.Context, e *Env, m Memory, a []uint64) Errno {
	switch {
	case uint32(a[0]) != scratchFd || !e.preopen:
		return EBADF
	case uint32(a[2]) < uint32(len(ScratchPath)):
		return EINVAL
	}
	return fault(m.Write(uint32(a[1]), []byte(ScratchPath)))
}
