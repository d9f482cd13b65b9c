package host

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestHTTPAllowList(t *testing.T) {
	t.Parallel()
	const rest = ", which is not a host name (example.com) or a host:port (example.com:8080); leave out the scheme and the path"
	tests := []struct {
		name    string
		hosts   []string
		wantErr string
	}{
		{"host names and host:ports", []string{"example.com", "API.example.com:8443", "127.0.0.1:8080", "[::1]:80"}, ""},
		{"a scheme", []string{"example.com", "https://example.com"}, `host: HTTPAllowList has "https://example.com"` + rest},
		{"a path", []string{"example.com/api"}, `host: HTTPAllowList has "example.com/api"` + rest},
		{"credentials", []string{"me@example.com"}, `host: HTTPAllowList has "me@example.com"` + rest},
		{"a space", []string{"example .com"}, `host: HTTPAllowList has "example .com"` + rest},
		{"empty", []string{""}, `host: HTTPAllowList has ""` + rest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{HTTPAllowList: tt.hosts}
			err := o.validate()
			if got := errText(err); got != tt.wantErr {
				t.Fatalf("validate: %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRuntimeOption(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ runtime, want, wantErr string }{
		{"", RuntimeWazero, ""},
		{"wazero", RuntimeWazero, ""},
		{"wasmtime", RuntimeWasmtime, ""},
		{"v8", "v8", `host: the runtime is "v8"; it must be "wazero" or "wasmtime"`},
	} {
		o := Options{Runtime: tt.runtime}
		if err := o.validate(); errText(err) != tt.wantErr || o.Runtime != tt.want {
			t.Errorf("Runtime %q: validate gave %q and Runtime %q; want %q and %q", tt.runtime, errText(err), o.Runtime, tt.wantErr, tt.want)
		}
	}
}

func TestScratchLimitOption(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		limit, want uint64
		wantErr     string
	}{
		{"the default", 0, DefaultScratchLimit, ""},
		{"a byte", 1, 1, ""},
		{"the most", 1<<63 - 1, 1<<63 - 1, ""},
		{"past int64", 1 << 63, 1 << 63, "host: the scratch limit is 9223372036854775808 bytes; it must be at most 9223372036854775807"},
	} {
		o := Options{ScratchLimit: tt.limit}
		if err := o.validate(); errText(err) != tt.wantErr || o.ScratchLimit != tt.want {
			t.Errorf("%s: validate gave %q and ScratchLimit %d; want %q and %d", tt.name, errText(err), o.ScratchLimit, tt.wantErr, tt.want)
		}
	}
}

// TestLiveCacheDefaults: by default the live cache may hold a quarter of
// the machine's memory (less under a cgroup limit), and a quarter as many
// instances as the system allows a process memory mappings.
func TestLiveCacheDefaults(t *testing.T) {
	t.Parallel()
	var o Options
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	meminfo, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatalf("the test reads the machine's memory from /proc/meminfo: %v", err)
	}
	var kib uint64
	if _, err := fmt.Sscanf(string(meminfo), "MemTotal: %d kB", &kib); err != nil {
		t.Fatalf("no MemTotal in /proc/meminfo: %v", err)
	}
	if o.MaxLiveMemory == 0 || o.MaxLiveMemory > kib<<10/4 {
		t.Errorf("MaxLiveMemory is %d bytes by default, on a machine of %d KiB; want more than 0 and at most a quarter", o.MaxLiveMemory, kib)
	}
	maps, err := os.ReadFile("/proc/sys/vm/max_map_count")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(maps)))
	if err != nil || o.MaxLiveInstances != n/4 {
		t.Errorf("MaxLiveInstances is %d by default, with vm.max_map_count %d; want a quarter", o.MaxLiveInstances, n)
	}
	explicit := Options{MaxLiveMemory: 5 << 20, MaxLiveInstances: 7}
	if err := explicit.validate(); err != nil || explicit.MaxLiveMemory != 5<<20 || explicit.MaxLiveInstances != 7 {
		t.Errorf("validate changed bounds it was given: %d bytes, %d instances, %v", explicit.MaxLiveMemory, explicit.MaxLiveInstances, err)
	}
}
