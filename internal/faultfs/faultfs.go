// Package faultfs gives a test a disk that misbehaves on demand: a FUSE
// loopback file system (github.com/hanwen/go-fuse) over a directory of
// the test's own, served by the test's process, whose writes and fsyncs
// the test can make slow or fail with EIO while a real SQLite database on
// it is in use. Mounting needs root and /dev/fuse; where either is
// missing the test is skipped, saying why, unless $DURABOX_REQUIRE_FUSE is
// set (as in CI), where it fails.
//
//	disk := faultfs.Mount(t)
//	… a host on a file in disk.Dir() …
//	disk.Set(faultfs.Faults{FsyncDelay: 2 * time.Second})
//	… every fsync takes 2 s …
//	disk.Set(faultfs.Faults{FailWrites: true, Only: "-wal"})
//	… every write of the WAL fails with EIO …
//	disk.Set(faultfs.Faults{})
//
// Reads, and everything but write and fsync, pass through unchanged. A
// write that fails writes nothing; an fsync that fails has synced
// nothing, though what the file's earlier writes wrote is in the
// directory below (as a real disk's page cache may hold it after an
// fsync failed).
package faultfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Faults is what the disk does wrong; the zero value is a disk that does
// nothing wrong.
type Faults struct {
	// FsyncDelay is how long each fsync waits before it syncs; zero means
	// none.
	FsyncDelay time.Duration
	// FailWrites makes writes fail with EIO once WriteBudget more bytes
	// have been written.
	FailWrites bool
	// WriteBudget is how many bytes may still be written, from Set on,
	// before writes fail (a write that would cross it fails whole); zero
	// means none. It counts only when FailWrites is set.
	WriteBudget int64
	// FailFsyncs makes every fsync fail with EIO, syncing nothing.
	FailFsyncs bool
	// Only, when set, limits the faults to the files whose names end with
	// it ("-wal": SQLite's write-ahead log); empty means every file.
	Only string
}

// FS is a mounted file system with faults the test sets.
type FS struct {
	dir string
	mu  sync.Mutex
	// faults is what the disk does wrong now; written is what was written
	// to the files it names since it was set.
	faults  Faults
	written int64
	// failed counts the writes and fsyncs that failed.
	failed int
}

// Mount mounts a file system for the test over a directory of its own,
// and returns it; the test's cleanup unmounts it.
func Mount(t testing.TB) *FS {
	t.Helper()
	under, dir := filepath.Join(t.TempDir(), "under"), filepath.Join(t.TempDir(), "disk")
	for _, d := range []string{under, dir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	root, err := fs.NewLoopbackRoot(under)
	if err != nil {
		t.Fatal(err)
	}
	f := &FS{dir: dir}
	server, err := fs.Mount(dir, &node{LoopbackNode: root.(*fs.LoopbackNode), fs: f}, &fs.Options{
		MountOptions: fuse.MountOptions{DirectMount: true, DirectMountStrict: true, FsName: "faultfs", Name: "faultfs"},
	})
	if err != nil {
		skip(t, fmt.Sprintf("a failing disk is a FUSE file system the test serves, and mounting one is not possible here (%v); run the test as root on a machine with /dev/fuse", err))
	}
	t.Cleanup(func() {
		if err := server.Unmount(); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return f
}

// skip skips the test, or fails it under $DURABOX_REQUIRE_FUSE.
func skip(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("DURABOX_REQUIRE_FUSE") != "" {
		t.Fatalf("%s ($DURABOX_REQUIRE_FUSE is set)", why)
	}
	t.Skip(why)
}

// Dir is the directory the file system is mounted on.
func (f *FS) Dir() string { return f.dir }

// Set makes the disk do what faults says from now on, and returns how
// many writes and fsyncs failed under the faults set before.
func (f *FS) Set(faults Faults) (failed int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	failed = f.failed
	f.faults, f.written, f.failed = faults, 0, 0
	return failed
}

// write decides a write of n bytes to the file name: nil lets it through.
func (f *FS) write(name string, n int) syscall.Errno {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.faults.FailWrites || !strings.HasSuffix(name, f.faults.Only) {
		return 0
	}
	if f.written+int64(n) <= f.faults.WriteBudget {
		f.written += int64(n)
		return 0
	}
	f.failed++
	return syscall.EIO
}

// fsync decides an fsync of the file name, after its delay.
func (f *FS) fsync(name string) syscall.Errno {
	f.mu.Lock()
	faults := f.faults
	f.mu.Unlock()
	if !strings.HasSuffix(name, faults.Only) {
		return 0
	}
	time.Sleep(faults.FsyncDelay) // the fault: a disk slow to sync
	if !faults.FailFsyncs {
		return 0
	}
	f.mu.Lock()
	f.failed++
	f.mu.Unlock()
	return syscall.EIO
}

// node is a loopback node whose files are opened as faulty ones.
type node struct {
	*fs.LoopbackNode
	fs *FS
}

var (
	_ fs.NodeWrapChilder = (*node)(nil)
	_ fs.NodeOpener      = (*node)(nil)
	_ fs.NodeCreater     = (*node)(nil)
)

// WrapChild makes the nodes the loopback makes faulty ones too.
func (n *node) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &node{LoopbackNode: ops.(*fs.LoopbackNode), fs: n.fs}
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	return n.file(fh, n.Path(nil)), fuseFlags, 0
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	ch, fh, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	return ch, n.file(fh, name), fuseFlags, 0
}

func (n *node) file(fh fs.FileHandle, name string) *file {
	return &file{LoopbackFile: fh.(*fs.LoopbackFile), fs: n.fs, name: name}
}

// file is a loopback file whose writes and fsyncs obey the faults.
type file struct {
	*fs.LoopbackFile
	fs   *FS
	name string
}

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if errno := f.fs.write(f.name, len(data)); errno != 0 {
		return 0, errno
	}
	return f.LoopbackFile.Write(ctx, data, off)
}

func (f *file) Writev(ctx context.Context, data [][]byte, off int64) (uint32, syscall.Errno) {
	n := 0
	for _, d := range data {
		n += len(d)
	}
	if errno := f.fs.write(f.name, n); errno != 0 {
		return 0, errno
	}
	return f.LoopbackFile.Writev(ctx, data, off)
}

func (f *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	if errno := f.fs.fsync(f.name); errno != 0 {
		return errno
	}
	return f.LoopbackFile.Fsync(ctx, flags)
}

// PassthroughFd refuses the kernel the file below: with it, the kernel
// would read and write that file itself (FUSE passthrough), and no write
// would meet a fault.
func (f *file) PassthroughFd() (int, bool) { return 0, false }
