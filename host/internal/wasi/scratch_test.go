package wasi

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// Where the scratch tests put things in the guest's memory.
const (
	atPath  = 0
	atFd    = 512
	atIovec = 600
	atCount = 700
	atData  = 1024
)

// scratchEnv returns an activity's environment with a scratch directory
// of limit bytes, made under a directory of the test's, which it returns.
func scratchEnv(t *testing.T, limit int64) (*Env, *Scratch, string) {
	t.Helper()
	parent := t.TempDir()
	e := NewReal(nil, nil, nil)
	e.OfferScratch()
	s := NewScratch(parent, limit)
	e.SetScratch(s)
	t.Cleanup(func() { s.Close() })
	return e, s, parent
}

// open calls path_open on the scratch directory with oflags, for writing
// or only reading, and returns its errno and the fd.
func open(t *testing.T, e *Env, m memory, path string, oflags uint64, write bool) (Errno, uint64) {
	t.Helper()
	copy(m[atPath:], path)
	rights := uint64(rightFdRead)
	if write {
		rights |= rightFdWrite
	}
	errno := call(t, context.Background(), e, m, "path_open", scratchFd, 0, atPath, uint64(len(path)), oflags, rights, rights, 0, atFd)
	return errno, uint64(u32(m, atFd))
}

// write calls fd_write with data, or fd_pwrite at offset when it is not
// negative.
func write(t *testing.T, e *Env, m memory, fd uint64, data string, offset int64) Errno {
	t.Helper()
	copy(m[atData:], data)
	binary.LittleEndian.PutUint32(m[atIovec:], atData)
	binary.LittleEndian.PutUint32(m[atIovec+4:], uint32(len(data)))
	if offset >= 0 {
		return call(t, context.Background(), e, m, "fd_pwrite", fd, atIovec, 1, uint64(offset), atCount)
	}
	return call(t, context.Background(), e, m, "fd_write", fd, atIovec, 1, atCount)
}

func pathCall(t *testing.T, e *Env, m memory, name, path string) Errno {
	t.Helper()
	copy(m[atPath:], path)
	return call(t, context.Background(), e, m, name, scratchFd, atPath, uint64(len(path)))
}

func entries(t *testing.T, dir string) int {
	t.Helper()
	list, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// The scratch directory is preopened as fd 3, /scratch; looking at it
// makes nothing on the host, its first file makes it, and Close removes
// it, after which every call on it is refused.
func TestScratchIsMadeOnFirstUseAndRemovedOnClose(t *testing.T) {
	t.Parallel()
	e, s, parent := scratchEnv(t, 1<<20)
	m := make(memory, 2048)
	if errno := call(t, context.Background(), e, m, "fd_prestat_get", scratchFd, 0); errno != ESUCCESS || m[0] != 0 || u32(m, 4) != uint32(len(ScratchPath)) {
		t.Fatalf("fd_prestat_get(3): errno %d, prestat % x; want a directory with a name of %d bytes", errno, m[:8], len(ScratchPath))
	}
	if errno := call(t, context.Background(), e, m, "fd_prestat_dir_name", scratchFd, 100, uint64(len(ScratchPath))); errno != ESUCCESS || string(m[100:100+len(ScratchPath)]) != ScratchPath {
		t.Fatalf("fd_prestat_dir_name(3): errno %d, %q", errno, m[100:100+len(ScratchPath)])
	}
	if errno := call(t, context.Background(), e, m, "fd_prestat_get", scratchFd+1, 0); errno != EBADF {
		t.Fatalf("fd_prestat_get(4): errno %d, want EBADF (the end of the preopens)", errno)
	}
	copy(m[atPath:], ".")
	if errno := call(t, context.Background(), e, m, "path_filestat_get", scratchFd, 0, atPath, 1, 100); errno != ESUCCESS || m[116] != fileTypeDirectory {
		t.Fatalf("path_filestat_get(.): errno %d, type %d; want a directory", errno, m[116])
	}
	if n := entries(t, parent); n != 0 {
		t.Fatalf("looking at the scratch directory made %d entries on the host; want none", n)
	}
	errno, fd := open(t, e, m, "a", oflagCreate, true)
	if errno != ESUCCESS || fd != scratchFd+1 {
		t.Fatalf("path_open: errno %d, fd %d", errno, fd)
	}
	if errno := write(t, e, m, fd, "hello", -1); errno != ESUCCESS || u32(m, atCount) != 5 {
		t.Fatalf("fd_write: errno %d, wrote %d", errno, u32(m, atCount))
	}
	if n := entries(t, parent); n != 1 {
		t.Fatalf("the first file made %d directories on the host; want 1", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := entries(t, parent); n != 0 {
		t.Fatalf("Close left %d entries on the host; want none", n)
	}
	if errno := write(t, e, m, fd, "more", -1); errno != EBADF {
		t.Errorf("fd_write after Close: errno %d, want EBADF", errno)
	}
	if errno, _ := open(t, e, m, "b", oflagCreate, true); errno != EBADF {
		t.Errorf("path_open after Close: errno %d, want EBADF", errno)
	}
}

// A path is refused before it is resolved when it is absolute or has a
// ".." element, and a symbolic link (which the guest cannot make, but the
// host's directory might hold) leads nowhere outside.
func TestScratchPathsStayInside(t *testing.T) {
	t.Parallel()
	e, s, _ := scratchEnv(t, 1<<20)
	m := make(memory, 2048)
	tests := []struct {
		path string
		want Errno
	}{
		{"../x", ENOTCAPABLE},
		{"..", ENOTCAPABLE},
		{"a/../../x", ENOTCAPABLE},
		{"a/../b", ENOTCAPABLE},
		{"/etc/hostname", ENOTCAPABLE},
		{"", EINVAL},
		{"a\x00b", EINVAL},
	}
	for _, tt := range tests {
		if errno, _ := open(t, e, m, tt.path, oflagCreate, true); errno != tt.want {
			t.Errorf("path_open(%q): errno %d, want %d", tt.path, errno, tt.want)
		}
	}
	if errno, _ := open(t, e, m, "made", oflagCreate, true); errno != ESUCCESS {
		t.Fatalf("path_open: errno %d", errno)
	}
	if err := os.Symlink("/etc", filepath.Join(s.dir, "link")); err != nil {
		t.Fatal(err)
	}
	if errno, _ := open(t, e, m, "link/hostname", 0, false); errno == ESUCCESS {
		t.Errorf("path_open through a link to /etc succeeded; want it refused")
	}
}

// Writes are charged for what they grow the files by, and refused with
// ENOSPC past the budget; removing or truncating a file gives its bytes
// back.
func TestScratchBudget(t *testing.T) {
	t.Parallel()
	e, s, _ := scratchEnv(t, 10)
	m := make(memory, 2048)
	_, fd := open(t, e, m, "a", oflagCreate, true)
	steps := []struct {
		name   string
		do     func() Errno
		want   Errno
		used   int64
		isFull bool
	}{
		{"write 8", func() Errno { return write(t, e, m, fd, "12345678", -1) }, ESUCCESS, 8, false},
		{"overwrite 4 at 0", func() Errno { return write(t, e, m, fd, "abcd", 0) }, ESUCCESS, 8, false},
		{"write 4 more", func() Errno { return write(t, e, m, fd, "wxyz", -1) }, ENOSPC, 8, true},
		{"write 2 more", func() Errno { return write(t, e, m, fd, "!!", -1) }, ESUCCESS, 10, true},
		{"grow it", func() Errno { return call(t, context.Background(), e, m, "fd_filestat_set_size", fd, 11) }, ENOSPC, 10, true},
		{"truncate it", func() Errno { return call(t, context.Background(), e, m, "fd_filestat_set_size", fd, 4) }, ESUCCESS, 4, true},
		{"close it", func() Errno { return call(t, context.Background(), e, m, "fd_close", fd) }, ESUCCESS, 4, true},
		{"unlink it", func() Errno { return pathCall(t, e, m, "path_unlink_file", "a") }, ESUCCESS, 0, true},
		{"unlink it again", func() Errno { return pathCall(t, e, m, "path_unlink_file", "a") }, ENOENT, 0, true},
		{"mkdir", func() Errno { return pathCall(t, e, m, "path_create_directory", "d") }, ESUCCESS, 0, true},
		{"unlink a directory", func() Errno { return pathCall(t, e, m, "path_unlink_file", "d") }, EISDIR, 0, true},
		{"rmdir", func() Errno { return pathCall(t, e, m, "path_remove_directory", "d") }, ESUCCESS, 0, true},
	}
	for _, step := range steps {
		if got := step.do(); got != step.want || s.used != step.used || s.Full() != step.isFull {
			t.Fatalf("%s: errno %d, %d bytes used, full %v; want errno %d, %d bytes, full %v", step.name, got, s.used, s.Full(), step.want, step.used, step.isFull)
		}
	}
	if s.entries != 0 {
		t.Errorf("%d entries counted; want 0", s.entries)
	}
}

// An attempt opens at most MaxScratchOpen files at once; an fd is never
// given twice in an instance, even by the next attempt's directory.
func TestScratchOpenFiles(t *testing.T) {
	t.Parallel()
	e, s, parent := scratchEnv(t, 1<<20)
	m := make(memory, 2048)
	for i := range MaxScratchOpen {
		if errno, _ := open(t, e, m, "f", oflagCreate, true); errno != ESUCCESS {
			t.Fatalf("file %d: errno %d", i+1, errno)
		}
	}
	if errno, _ := open(t, e, m, "f", oflagCreate, true); errno != EMFILE {
		t.Fatalf("file %d: errno %d, want EMFILE", MaxScratchOpen+1, errno)
	}
	s.Close()
	next := NewScratch(parent, 1<<20)
	e.SetScratch(next)
	defer next.Close()
	if errno, fd := open(t, e, m, "f", oflagCreate, true); errno != ESUCCESS || fd != scratchFd+MaxScratchOpen+1 {
		t.Fatalf("the next attempt's first file: errno %d, fd %d; want fd %d", errno, fd, scratchFd+MaxScratchOpen+1)
	}
}

// An orchestration has no scratch directory, whatever it is offered.
func TestAnOrchestrationHasNoScratch(t *testing.T) {
	t.Parallel()
	e := deterministic()
	e.OfferScratch()
	s := NewScratch(t.TempDir(), 1<<20)
	defer s.Close()
	e.SetScratch(s)
	m := make(memory, 2048)
	if errno := call(t, context.Background(), e, m, "fd_prestat_get", scratchFd, 0); errno != EBADF {
		t.Errorf("fd_prestat_get(3): errno %d, want EBADF", errno)
	}
	if errno, _ := open(t, e, m, "a", oflagCreate, true); errno != ENOTCAPABLE {
		t.Errorf("path_open: errno %d, want ENOTCAPABLE", errno)
	}
}
