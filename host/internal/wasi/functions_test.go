package wasi

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// function returns the WASI function name.
func function(t *testing.T, name string) Function {
	t.Helper()
	for _, f := range Functions {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no function %s", name)
	return Function{}
}

// call calls the WASI function name as a runtime would.
func call(t *testing.T, ctx context.Context, e *Env, m Memory, name string, args ...uint64) Errno {
	t.Helper()
	f := function(t, name)
	if len(args) != len(f.Params) {
		t.Fatalf("%s takes %d arguments, the test gave %d", name, len(f.Params), len(args))
	}
	return Errno(f.Call(ctx, e, m, args))
}

func deterministic() *Env { return NewDeterministic([32]byte{1}, nil, nil) }

func u32(m memory, addr uint32) uint32 { return binary.LittleEndian.Uint32(m[addr:]) }
func u64(m memory, addr uint32) uint64 { return binary.LittleEndian.Uint64(m[addr:]) }

// ABI.md's table of WASI functions has a row for every function, and for
// no other.
func TestABIListsEveryFunction(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../../abi/ABI.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(doc), "\n### WASI functions\n")
	_, table, _ = strings.Cut(table, "\n-----------------------  --")
	table, _, _ = strings.Cut(table, "\n```\n")
	var rows []string
	for line := range strings.Lines(table) {
		if name, _, _ := strings.Cut(line, " "); name != "" && name != "\n" {
			rows = append(rows, name)
		}
	}
	var names []string
	for _, f := range Functions {
		names = append(names, f.Name)
	}
	slices.Sort(rows)
	slices.Sort(names)
	if !slices.Equal(rows, names) {
		t.Errorf("ABI.md's table of WASI functions has rows for\n%q\nthe host provides\n%q", rows, names)
	}
	if len(Functions) != 46 {
		t.Errorf("%d functions, WASI preview 1 has 46", len(Functions))
	}
}

// The answers that do not depend on the environment, on fd 1 (stdout) and
// on fd 3 (which does not exist). Arguments past the fd are zero.
func TestFileDescriptorAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		stdout, other Errno
	}{
		{"fd_advise", ESPIPE, EBADF},
		{"fd_allocate", ENOTSUP, EBADF},
		{"fd_close", ESUCCESS, EBADF},
		{"fd_datasync", ESUCCESS, EBADF},
		{"fd_fdstat_get", ESUCCESS, EBADF},
		{"fd_fdstat_set_flags", ESUCCESS, EBADF},
		{"fd_fdstat_set_rights", ENOTSUP, EBADF},
		{"fd_filestat_get", ESUCCESS, EBADF},
		{"fd_filestat_set_size", ENOTSUP, EBADF},
		{"fd_filestat_set_times", ENOTSUP, EBADF},
		{"fd_pread", ESPIPE, EBADF},
		{"fd_prestat_get", EBADF, EBADF},
		{"fd_prestat_dir_name", EBADF, EBADF},
		{"fd_pwrite", ESPIPE, EBADF},
		{"fd_read", EBADF, EBADF},
		{"fd_readdir", ENOTDIR, EBADF},
		{"fd_renumber", ENOTSUP, EBADF},
		{"fd_seek", ESPIPE, EBADF},
		{"fd_sync", ESUCCESS, EBADF},
		{"fd_tell", ESPIPE, EBADF},
		{"fd_write", ESUCCESS, EBADF},
		{"path_create_directory", ENOTCAPABLE, ENOTCAPABLE},
		{"path_filestat_get", ENOTCAPABLE, ENOTCAPABLE},
		{"path_filestat_set_times", ENOTCAPABLE, ENOTCAPABLE},
		{"path_link", ENOTCAPABLE, ENOTCAPABLE},
		{"path_open", ENOTCAPABLE, ENOTCAPABLE},
		{"path_readlink", ENOTCAPABLE, ENOTCAPABLE},
		{"path_remove_directory", ENOTCAPABLE, ENOTCAPABLE},
		{"path_rename", ENOTCAPABLE, ENOTCAPABLE},
		{"path_symlink", ENOTCAPABLE, ENOTCAPABLE},
		{"path_unlink_file", ENOTCAPABLE, ENOTCAPABLE},
		{"proc_raise", ENOTSUP, ENOTSUP},
		{"sock_accept", ENOTSUP, ENOTSUP},
		{"sock_recv", ENOTSUP, ENOTSUP},
		{"sock_send", ENOTSUP, ENOTSUP},
		{"sock_shutdown", ENOTSUP, ENOTSUP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, e := range []*Env{deterministic(), NewReal(nil, nil, nil)} {
				for fd, want := range map[uint64]Errno{1: tt.stdout, 3: tt.other} {
					args := make([]uint64, len(function(t, tt.name).Params))
					args[0] = fd
					if got := call(t, context.Background(), e, make(memory, 64), tt.name, args...); got != want {
						t.Errorf("fd %d: errno %d, want %d", fd, got, want)
					}
				}
			}
		})
	}
}

func TestStdioStat(t *testing.T) {
	t.Parallel()
	m := make(memory, 64)
	if errno := call(t, context.Background(), deterministic(), m, "fd_fdstat_get", 1, 0); errno != ESUCCESS || m[0] != fileTypeCharacterDevice || u32(m, 2) != 0 {
		t.Errorf("fd_fdstat_get: errno %d, stat % x; want a character device with no flags", errno, m[:24])
	}
	m = make(memory, 64)
	if errno := call(t, context.Background(), deterministic(), m, "fd_filestat_get", 2, 0); errno != ESUCCESS || m[16] != fileTypeCharacterDevice {
		t.Errorf("fd_filestat_get: errno %d, stat % x; want a character device", errno, m)
	}
}

func TestArgsAndEnviron(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		env        *Env
		wantBlock  string
		wantCount  uint32
		wantPtrsAt []uint32
	}{
		{"deterministic", deterministic(), "", 0, nil},
		{"real, no variables", NewReal(nil, nil, nil), "", 0, nil},
		{"real", NewReal([]string{"A=1", "LONGER=two"}, nil, nil), "A=1\x00LONGER=two\x00", 2, []uint32{100, 104}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			m := make(memory, 200)
			if errno := call(t, ctx, tt.env, m, "environ_sizes_get", 0, 4); errno != ESUCCESS || u32(m, 0) != tt.wantCount || u32(m, 4) != uint32(len(tt.wantBlock)) {
				t.Fatalf("environ_sizes_get: errno %d, count %d, size %d", errno, u32(m, 0), u32(m, 4))
			}
			if errno := call(t, ctx, tt.env, m, "environ_get", 8, 100); errno != ESUCCESS {
				t.Fatalf("environ_get: errno %d", errno)
			}
			if got := string(m[100 : 100+len(tt.wantBlock)]); got != tt.wantBlock {
				t.Errorf("block %q, want %q", got, tt.wantBlock)
			}
			for i, want := range tt.wantPtrsAt {
				if got := u32(m, 8+4*uint32(i)); got != want {
					t.Errorf("pointer %d is %d, want %d", i, got, want)
				}
			}
			if errno := call(t, ctx, tt.env, m, "args_sizes_get", 0, 4); errno != ESUCCESS || u32(m, 0) != 0 || u32(m, 4) != 0 {
				t.Errorf("args_sizes_get: errno %d, %d arguments of %d bytes", errno, u32(m, 0), u32(m, 4))
			}
		})
	}
}

func TestDeterministicClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := deterministic()
	m := make(memory, 16)
	now := func(clock uint64) uint64 {
		t.Helper()
		if errno := call(t, ctx, e, m, "clock_time_get", clock, 0, 0); errno != ESUCCESS {
			t.Fatalf("clock_time_get(%d): errno %d", clock, errno)
		}
		return u64(m, 0)
	}
	if got := now(clockMonotonic); got != 1 {
		t.Errorf("monotonic starts at %d, want 1", got)
	}
	steps := []struct {
		set            int64
		wall, monotone uint64
	}{
		{1_000, 1_000, 1_000},
		{5_000, 5_000, 5_000},
		{3_000, 3_000, 5_000}, // the wall clock follows history; the monotonic clock never goes back
		{9_000, 9_000, 9_000},
	}
	for _, s := range steps {
		e.SetTime(s.set)
		if wall, mono := now(clockRealtime), now(clockMonotonic); wall != s.wall || mono != s.monotone {
			t.Errorf("SetTime(%d): realtime %d, monotonic %d; want %d, %d", s.set, wall, mono, s.wall, s.monotone)
		}
	}
	for clock, want := range map[uint64]Errno{0: ESUCCESS, 1: ESUCCESS, 2: ENOTSUP, 3: ENOTSUP, 4: EINVAL} {
		if errno := call(t, ctx, e, m, "clock_res_get", clock, 0); errno != want || (want == ESUCCESS && u64(m, 0) != resolution) {
			t.Errorf("clock_res_get(%d): errno %d, resolution %d", clock, errno, u64(m, 0))
		}
		if errno := call(t, ctx, e, m, "clock_time_get", clock, 0, 0); errno != want {
			t.Errorf("clock_time_get(%d): errno %d, want %d", clock, errno, want)
		}
	}
	if errno := call(t, ctx, e, m, "clock_time_get", 0, 0, 12); errno != EFAULT {
		t.Errorf("clock_time_get outside memory: errno %d, want EFAULT", errno)
	}
}

func TestRealClock(t *testing.T) {
	t.Parallel()
	e := NewReal(nil, nil, nil)
	e.SetTime(1) // ignored
	m := make(memory, 16)
	call(t, context.Background(), e, m, "clock_time_get", clockRealtime, 0, 0)
	if d := time.Since(time.Unix(0, int64(u64(m, 0)))).Abs(); d > time.Minute {
		t.Errorf("the real clock is %s off", d)
	}
}

func TestRandom(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	draw := func(e *Env, sizes ...uint32) []byte {
		var out []byte
		for _, n := range sizes {
			m := make(memory, n)
			if errno := call(t, ctx, e, m, "random_get", 0, uint64(n)); errno != ESUCCESS {
				t.Fatalf("random_get(%d): errno %d", n, errno)
			}
			out = append(out, m...)
		}
		return out
	}
	a := draw(NewDeterministic([32]byte{7}, nil, nil), 1000)
	if b := draw(NewDeterministic([32]byte{7}, nil, nil), 3, 600, 397); !bytes.Equal(a, b) {
		t.Error("the same seed drawn in other sizes gave another stream")
	}
	if c := draw(NewDeterministic([32]byte{8}, nil, nil), 1000); bytes.Equal(a, c) {
		t.Error("another seed gave the same stream")
	}
	real := NewReal(nil, nil, nil)
	if bytes.Equal(draw(real, 32), draw(real, 32)) {
		t.Error("real randomness repeated itself")
	}
	if errno := call(t, ctx, deterministic(), make(memory, 8), "random_get", 4, 1<<31); errno != EFAULT {
		t.Errorf("random_get past memory: errno %d, want EFAULT", errno)
	}
}

// iovec writes an iovec array at addr for buffers at the given addresses.
func iovec(m memory, addr uint32, bufs ...[2]uint32) {
	for i, b := range bufs {
		binary.LittleEndian.PutUint32(m[addr+8*uint32(i):], b[0])
		binary.LittleEndian.PutUint32(m[addr+8*uint32(i)+4:], b[1])
	}
}

func TestStdio(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var stdout, stderr bytes.Buffer
	e := NewDeterministic([32]byte{}, &stdout, &stderr)
	m := make(memory, 128)
	copy(m[64:], "hello, world")
	iovec(m, 0, [2]uint32{64, 7}, [2]uint32{71, 5})
	if errno := call(t, ctx, e, m, "fd_write", 1, 0, 2, 32); errno != ESUCCESS || u32(m, 32) != 12 || stdout.String() != "hello, world" {
		t.Errorf("fd_write(1): errno %d, %d written, stdout %q", errno, u32(m, 32), stdout.String())
	}
	if errno := call(t, ctx, e, m, "fd_write", 2, 0, 1, 32); errno != ESUCCESS || stderr.String() != "hello, " {
		t.Errorf("fd_write(2): errno %d, stderr %q", errno, stderr.String())
	}
	if errno := call(t, ctx, deterministic(), m, "fd_write", 1, 0, 1, 32); errno != ESUCCESS {
		t.Errorf("fd_write to a nil writer: errno %d", errno)
	}
	iovec(m, 16, [2]uint32{120, 100})
	if errno := call(t, ctx, e, m, "fd_write", 1, 16, 1, 32); errno != EFAULT {
		t.Errorf("fd_write of a buffer past memory: errno %d, want EFAULT", errno)
	}
	// 8 * 0x20000001 overflows 32 bits to 8.
	if errno := call(t, ctx, e, m, "fd_write", 1, 0, 0x20000001, 32); errno != EFAULT {
		t.Errorf("fd_write of 2^29+1 iovecs: errno %d, want EFAULT", errno)
	}
	m[32] = 0xff
	if errno := call(t, ctx, e, m, "fd_read", 0, 0, 1, 32); errno != ESUCCESS || u32(m, 32) != 0 {
		t.Errorf("fd_read(0): errno %d, %d read; want end of file", errno, u32(m, 32))
	}
}

func TestProcExit(t *testing.T) {
	t.Parallel()
	defer func() {
		var exit *ExitError
		if err, _ := recover().(error); !errors.As(err, &exit) || exit.Code != 3 {
			t.Fatalf("recovered %v, want exit code 3", err)
		}
	}()
	call(t, context.Background(), deterministic(), nil, "proc_exit", 3)
}
