package host_test

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/wasmrewrite"
	"github.com/durabox/durabox/host/internal/wasmrewrite/wasmtest"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/sqlite"
)

// FuzzDeploy deploys arbitrary bytes as a module, and a module whose
// describe export returns arbitrary bytes as its manifest, through the
// real checks (Host.Deploy on wazero, on a SQLite file): nothing panics or
// hangs; every refusal is api.ErrBadModule with a message, and stores
// nothing; a module deployed is listed as its manifest says. The seed
// corpus is testdata/fuzz/FuzzDeploy and the cases here.
func FuzzDeploy(f *testing.F) {
	hello := abi.EncodeManifest(&abi.Manifest{SDK: "durabox-go test", Orchestrations: []string{"Hello"}, Activities: []string{"SayHello"}})
	f.Add(manifestModule(hello), hello)
	f.Add([]byte("\x00asm\x01\x00\x00\x00"), []byte{})
	f.Add([]byte("not wasm"), abi.EncodeManifest(&abi.Manifest{Activities: []string{"A", "A"}}))
	f.Add(wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec),
		abi.EncodeManifest(&abi.Manifest{Orchestrations: []string{"", "a\x00b", "\xff\xfe", strings.Repeat("n", 4096)}}))
	h := fuzzHost(f)
	// Unless the module deploys with a manifest that does, the fuzzer
	// explores only refusals.
	if info, err := h.Deploy(context.Background(), manifestModule(hello)); err != nil || !slices.Equal(info.Orchestrations, []string{"Hello"}) {
		f.Fatalf("the module of a good manifest: %+v, %v", info, err)
	}
	f.Fuzz(func(t *testing.T, wasm, manifest []byte) {
		deployFuzzed(t, h, wasm, nil)
		m, err := abi.DecodeManifest(manifest)
		if err != nil {
			m = nil
		}
		deployFuzzed(t, h, manifestModule(manifest), m)
	})
}

// fuzzHost is a host on a SQLite file that does not sync (what it stores
// is thrown away), with no compilation cache on disk, not running.
func fuzzHost(f *testing.F) *host.Host {
	st, err := sqlite.Open(filepath.Join(f.TempDir(), "durabox.db"), sqlite.Options{Durability: sqlite.DurabilityNormal})
	if err != nil {
		f.Fatal(err)
	}
	h, err := host.New(st, host.Options{ActivationTimeout: time.Second})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		h.Close()
		st.Close()
	})
	return h
}

// deployFuzzed deploys wasm on h and checks the outcome: a refusal is
// ErrBadModule with a message and stores nothing; a module deployed is
// listed with exactly what its manifest registers (want, when the test
// knows it), and is removed again, so that the fuzzer's modules do not
// pile up.
func deployFuzzed(t *testing.T, h *host.Host, wasm []byte, want *abi.Manifest) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before, err := h.Modules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	info, err := h.Deploy(ctx, wasm)
	if err != nil {
		if !errors.Is(err, api.ErrBadModule) || !strings.HasPrefix(err.Error(), api.ErrBadModule.Error()+": ") {
			t.Fatalf("deploy refused with %q; want api.ErrBadModule with a message", err)
		}
		if after, err := h.Modules(ctx); err != nil || len(after) != len(before) {
			t.Fatalf("deploy refused (%v) but the host lists %d modules, where it listed %d", err, len(after), len(before))
		}
		return
	}
	after, err := h.Modules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(after, func(m store.ModuleInfo) bool { return m.Hash == info.Hash })
	if i < 0 {
		t.Fatalf("module %s deployed, and not listed", info.Hash)
	}
	if want != nil && (!slices.Equal(after[i].Orchestrations, want.Orchestrations) || !slices.Equal(after[i].Activities, want.Activities)) {
		t.Fatalf("module listed with orchestrations %q and activities %q; its manifest registers %q and %q",
			after[i].Orchestrations, after[i].Activities, want.Orchestrations, want.Activities)
	}
	if err := h.RemoveModule(ctx, info.Hash); err != nil {
		t.Fatal(err)
	}
}

// manifestModule assembles the smallest module that has what deploy checks
// but a manifest of its own: it imports sched_yield (function 0), exports
// what the guest SDK exports (and its memory), speaks abi.Version, and its describe export returns
// manifest, which a data segment holds.
func manifestModule(manifest []byte) []byte {
	const at = 1024
	body := func(code string) string { return uleb(1+len(code)) + "\x00" + code } // no locals
	export := func(name string, kind byte, index int) string {
		return uleb(len(name)) + name + string(kind) + uleb(index)
	}
	return wasmtest.Module(
		1, vec("\x60\x00\x00", "\x60\x00\x01\x7f", "\x60\x01\x7f\x01\x7f", "\x60\x00\x01\x7e", "\x60\x02\x7f\x7f\x01\x7e"),
		2, vec(uleb(len(wasmrewrite.YieldModule))+wasmrewrite.YieldModule+uleb(len(wasmrewrite.YieldName))+wasmrewrite.YieldName+"\x00\x01"),
		3, vec("\x00", "\x01", "\x02", "\x03", "\x04", "\x04"),
		5, "\x01\x00"+uleb((at+len(manifest))/65536+1),
		7, vec(export("memory", 2, 0), export(abi.ExportInitialize, 0, 1), export(abi.ExportVersion, 0, 2), export(abi.ExportAlloc, 0, 3),
			export(abi.ExportDescribe, 0, 4), export(abi.ExportActivate, 0, 5), export(abi.ExportActivity, 0, 6)),
		10, vec(body("\x0b"), body("\x41"+sleb(abi.Version)+"\x0b"), body("\x41\x10\x0b"),
			body("\x42"+sleb(int64(abi.PackRegion(at, uint32(len(manifest)))))+"\x0b"), body("\x42\x00\x0b"), body("\x42\x00\x0b")),
		11, vec("\x00\x41"+sleb(at)+"\x0b"+uleb(len(manifest))+string(manifest)),
	)
}

// vec encodes a wasm vector of the encoded items.
func vec(items ...string) string { return uleb(len(items)) + strings.Join(items, "") }

func uleb(n int) string { return string(binary.AppendUvarint(nil, uint64(n))) }

// sleb encodes n as a signed LEB128, as i32.const and i64.const take it.
func sleb(n int64) string {
	var b []byte
	for {
		c := byte(n & 0x7f)
		n >>= 7
		if (n == 0 && c&0x40 == 0) || (n == -1 && c&0x40 != 0) {
			return string(append(b, c))
		}
		b = append(b, c|0x80)
	}
}
