package host

import (
	"os"
	"strconv"
	"strings"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// defaultLiveMemory is the default of Options.MaxLiveMemory: a quarter of
// the memory the host may use, its cgroup's limit when it has one, else
// the machine's (2 GiB when neither can be read).
func defaultLiveMemory() uint64 {
	limit, err := memlimit.ApplyFallback(memlimit.FromCgroup, memlimit.FromSystem)()
	if err != nil || limit == 0 {
		return 2 << 30
	}
	return limit / 4
}

// defaultMaxMapCount is Linux's default of vm.max_map_count, which the
// host assumes where it cannot read the system's.
const defaultMaxMapCount = 65530

// defaultLiveInstances is the default of Options.MaxLiveInstances: a
// quarter of the memory mappings the system allows a process. A live
// instance holds up to three (its reserved linear memory, the snapshot
// mapped over its start, and the part it grew past the snapshot), and a
// process past the limit cannot map anything more, not even its Go heap.
func defaultLiveInstances() int {
	n := defaultMaxMapCount
	if b, err := os.ReadFile("/proc/sys/vm/max_map_count"); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && v > 0 {
			n = v
		}
	}
	return n / 4
}
