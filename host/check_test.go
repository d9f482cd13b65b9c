package host_test

import (
	"context"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/guestbuild"
)

// onlyYield is a module that imports sched_yield and defines a memory, and
// has nothing else: not
// one of the ABI's exports.
const onlyYield = "\x00asm\x01\x00\x00\x00" +
	"\x01\x05\x01\x60\x00\x01\x7f" + // type 0: () -> i32
	"\x02\x26\x01\x16wasi_snapshot_preview1\x0bsched_yield\x00\x00" +
	"\x05\x03\x01\x00\x01" // memory 0: one page

// checkOn returns CheckModule's first refusal of wasm on runtimes.
func checkOn(t *testing.T, wasm []byte, runtimes ...string) error {
	t.Helper()
	report, err := host.CheckModule(context.Background(), wasm, runtimes)
	if err != nil {
		t.Fatal(err)
	}
	return report.Err()
}

// TestCheckModule checks modules on both runtimes: a good one passes on
// each, with what it registers; each bad one is refused on each runtime,
// in words that name what is wrong and what to do, and a host on either
// runtime refuses to deploy it with the same words.
func TestCheckModule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hello, err := guestbuild.Wasm("examples/wasm/hello")
	if err != nil {
		t.Fatal(err)
	}
	report, err := host.CheckModule(ctx, hello, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Runtimes) != 2 || report.Err() != nil || report.Manifest == nil ||
		!reflect.DeepEqual(report.Manifest.Orchestrations, []string{"Greeting"}) || !reflect.DeepEqual(report.Manifest.Activities, []string{"SayHello"}) {
		t.Fatalf("hello: %+v, manifest %+v; want it accepted on both runtimes", report.Runtimes, report.Manifest)
	}

	build := func(pkg string, vars ...string) []byte {
		wasm, err := guestbuild.Wasm(pkg, vars...)
		if err != nil {
			t.Fatal(err)
		}
		return wasm
	}
	tests := []struct {
		name string
		wasm []byte
		want string
	}{
		{"not wasm", []byte("hello.go"), "host: module refused: the file is not a WebAssembly module (it does not start with \\0asm); build one with durabox build"},
		{"without the ABI's exports", []byte(onlyYield), "host: module refused: it lacks the exports of the Durabox guest SDK (_initialize, durabox_abi_version, durabox_alloc, durabox_describe, durabox_activate, durabox_activity); in Go, import github.com/durabox/durabox/guest-sdk/durabox"},
		{"an empty orchestration name", build(boundaryGuest, "main.orchestration=x"), `host: module refused: orchestration name "" is empty: ` + nameRule},
		{"a NUL in an orchestration name", build(boundaryGuest, "main.orchestration=x"+hex.EncodeToString([]byte("Pay\x00ment"))), `host: module refused: orchestration name "Pay\x00ment" holds a control character (U+0000 at byte 3): ` + nameRule},
		{"without sched_yield", withoutYield(t, "examples/wasm/hello"), "host: module refused: it does not import wasi_snapshot_preview1.sched_yield, which the host calls to count its loops (for snapshots and --step-budget); import it as a function of no parameters and an i32 result (every Go module does; in C, call sched_yield from <sched.h>)"},
	}
	hosts := map[string]*testHost{}
	for _, rt := range host.Runtimes {
		hosts[rt] = startHost(t, host.Options{Runtime: rt})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report, err := host.CheckModule(ctx, tt.wasm, nil)
			if err != nil {
				t.Fatal(err)
			}
			if report.Manifest != nil {
				t.Errorf("manifest %+v; want none", report.Manifest)
			}
			for i, rt := range host.Runtimes {
				c := report.Runtimes[i]
				if c.Runtime != rt || !errors.Is(c.Err, api.ErrBadModule) || !strings.HasPrefix(c.Err.Error(), tt.want) {
					t.Errorf("check on %s: %s: %v\nwant it to start with %s", rt, c.Runtime, c.Err, tt.want)
				}
				if _, err := hosts[rt].Deploy(ctx, tt.wasm); err == nil || c.Err == nil || err.Error() != c.Err.Error() {
					t.Errorf("deploy on %s: %v\ncheck says %v", rt, err, c.Err)
				}
			}
		})
	}
}
