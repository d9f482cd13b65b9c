package wasi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
)

// ScratchPath is where an activity finds its scratch directory: the one
// directory the host preopens (fd 3), in an activity's instance only.
const ScratchPath = "/scratch"

// scratchFd is the preopened scratch directory's file descriptor; the
// files an attempt opens get the ones after it, never the same twice in
// an instance, so that a file a finished attempt left open (and whose
// finalizer closes it later) never names one of the next attempt's.
const scratchFd = 3

// The bounds of a scratch directory besides its byte budget: the files
// and directories open at once, and the entries (files and directories)
// it holds.
const (
	MaxScratchOpen    = 128
	MaxScratchEntries = 10_000
)

// Scratch is the scratch directory of one activity attempt: a directory
// of the host's, made on the attempt's first use of ScratchPath (an
// attempt that never touches it costs no mkdir), where the guest's files
// may hold at most a byte budget, and removed with all it holds by Close.
// The guest cannot reach outside it: paths are resolved inside it by
// os.Root, and the host refuses absolute paths and ".." before that.
//
// It is safe for use by the guest's calls and a concurrent Close.
type Scratch struct {
	mu sync.Mutex
	// parent is where the directory is made; limit is the byte budget.
	parent string
	limit  int64
	// dir is the directory, and root opens what it holds, once made; err
	// is why it could not be.
	dir  string
	root *os.Root
	err  error
	// used is the bytes the attempt's files hold, entries how many files
	// and directories; files are those open, by fd.
	used, entries int64
	files         map[uint32]*scratchFile
	closed        bool
	// full is set once a write was refused for the budget.
	full bool
}

// scratchFile is a file or directory the guest opened.
type scratchFile struct {
	f *os.File
	// name is its path in the scratch directory ("." for its top).
	name   string
	dir    bool
	append bool
	// listing is what fd_readdir reads, taken at its cookie 0.
	listing []fs.DirEntry
}

// NewScratch returns the scratch directory of an attempt, to be made under
// parent (empty: os.TempDir()) when first used, holding at most limit
// bytes.
func NewScratch(parent string, limit int64) *Scratch {
	return &Scratch{parent: parent, limit: limit, files: map[uint32]*scratchFile{}}
}

// Full reports whether a write was refused for the byte budget.
func (s *Scratch) Full() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.full
}

// Close closes the files the guest left open and removes the directory
// with everything in it. The guest's calls into it fail from then on.
func (s *Scratch) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	for _, f := range s.files {
		f.f.Close()
	}
	s.files = nil
	if s.root == nil {
		return nil
	}
	s.root.Close()
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("wasi: remove the scratch directory %s: %w", s.dir, err)
	}
	return nil
}

// open makes the directory if it is not yet, and returns its root.
func (s *Scratch) open() (*os.Root, Errno) {
	if s.closed {
		return nil, EBADF
	}
	if s.root != nil || s.err != nil {
		return s.root, errnoOf(s.err)
	}
	parent := s.parent
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "durabox-scratch-*")
	if err == nil {
		s.root, err = os.OpenRoot(dir)
		if err != nil {
			os.Remove(dir)
		}
	}
	if err != nil {
		s.err = err
		return nil, errnoOf(err)
	}
	s.dir = dir
	return s.root, ESUCCESS
}

// grow charges n more bytes to the budget, or answers ENOSPC.
func (s *Scratch) grow(n int64) Errno {
	if n > 0 && s.used+n > s.limit {
		s.full = true
		return ENOSPC
	}
	s.used = max(s.used+n, 0)
	return ESUCCESS
}

// add counts a new entry, or answers ENOSPC past MaxScratchEntries.
func (s *Scratch) add() Errno {
	if s.entries >= MaxScratchEntries {
		return ENOSPC
	}
	s.entries++
	return ESUCCESS
}

// forget uncharges an entry that is gone, which held size bytes.
func (s *Scratch) forget(size int64) {
	s.entries = max(s.entries-1, 0)
	s.used = max(s.used-size, 0)
}

// scratchName checks a path the guest gave relative to the directory
// base (a name in the scratch directory), and returns the name it
// means. An absolute path or one with a ".." element is ENOTCAPABLE: the
// guest never reaches outside the directory, nor anything but the
// directory's own entries.
func scratchName(base string, p []byte) (string, Errno) {
	name := string(p)
	switch {
	case name == "" || strings.IndexByte(name, 0) >= 0:
		return "", EINVAL
	case strings.HasPrefix(name, "/"):
		return "", ENOTCAPABLE
	}
	for elem := range strings.SplitSeq(name, "/") {
		if elem == ".." {
			return "", ENOTCAPABLE
		}
	}
	return path.Join(base, name), ESUCCESS
}

// errnoOf is the errno of an error of the host's file system.
func errnoOf(err error) Errno {
	if err == nil {
		return ESUCCESS
	}
	var n syscall.Errno
	if !errors.As(err, &n) {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return ENOENT
		case errors.Is(err, fs.ErrExist):
			return EEXIST
		case errors.Is(err, fs.ErrPermission):
			return EPERM
		}
		return EIO
	}
	if e, ok := errnos[n]; ok {
		return e
	}
	return EIO
}

// errnos are the WASI errnos of the host's errors a scratch directory
// may meet.
var errnos = map[syscall.Errno]Errno{
	syscall.EACCES:       EACCES,
	syscall.EBADF:        EBADF,
	syscall.EBUSY:        EBUSY,
	syscall.EEXIST:       EEXIST,
	syscall.EFBIG:        EFBIG,
	syscall.EINVAL:       EINVAL,
	syscall.EISDIR:       EISDIR,
	syscall.ELOOP:        ELOOP,
	syscall.EMFILE:       EMFILE,
	syscall.ENAMETOOLONG: ENAMETOOLONG,
	syscall.ENOENT:       ENOENT,
	syscall.ENOSPC:       ENOSPC,
	syscall.EDQUOT:       ENOSPC,
	syscall.ENOTDIR:      ENOTDIR,
	syscall.ENOTEMPTY:    ENOTEMPTY,
	syscall.EPERM:        EPERM,
	syscall.EXDEV:        EXDEV,
}
