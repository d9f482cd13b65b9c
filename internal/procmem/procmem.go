// Package procmem reads the process's memory as the kernel counts it, for
// the tests and benchmarks that measure what instances cost.
//
// Settled measures after the Go runtime and the C allocator have returned
// to the system what they hold free. Without the C allocator's part, a
// measure taken after earlier work freed C memory (SQLite's caches, a
// closed wasmtime store) counts new allocations that reuse that memory as
// costing nothing: 100 wasmtime instances measured 187 KiB each after a
// wazero run in the same process, and 254 KiB alone.
package procmem

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// Memory is the process's memory, in bytes.
type Memory struct {
	// PSS is the proportional set size: a page that several mappings
	// share counts once among them.
	PSS int64
	// RSS is the resident set size: a shared page counts for every
	// mapping of it.
	RSS int64
	// Anonymous is the resident memory that no file backs.
	Anonymous int64
}

// Read returns the process's memory from /proc/self/smaps_rollup.
func Read() (Memory, error) {
	const path = "/proc/self/smaps_rollup"
	b, err := os.ReadFile(path)
	if err != nil {
		return Memory{}, fmt.Errorf("the process's memory: %w (it is read from Linux's %s)", err, path)
	}
	var m Memory
	for _, line := range strings.Split(string(b), "\n") {
		for _, f := range []struct {
			name string
			to   *int64
		}{{"Pss", &m.PSS}, {"Rss", &m.RSS}, {"Anonymous", &m.Anonymous}} {
			var kib int64
			if _, err := fmt.Sscanf(line, f.name+": %d kB", &kib); err == nil {
				*f.to = kib << 10
			}
		}
	}
	if m.PSS == 0 || m.RSS == 0 {
		return Memory{}, fmt.Errorf("the process's memory: no Pss or Rss in %s:\n%s", path, b)
	}
	return m, nil
}

// Settled returns the process's memory once a full garbage collection has
// run and the Go runtime and the C allocator have returned to the system
// what they hold free.
func Settled() (Memory, error) {
	runtime.GC()
	debug.FreeOSMemory()
	trimC()
	return Read()
}
