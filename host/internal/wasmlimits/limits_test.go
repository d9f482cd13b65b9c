package wasmlimits

import (
	"os"
	"strings"
	"testing"

	"github.com/durabox/durabox/host/internal/wasmrewrite/wasmtest"
	"github.com/durabox/durabox/internal/guestbuild"
)

func TestMain(m *testing.M) {
	code := m.Run()
	guestbuild.Cleanup()
	os.Exit(code)
}

// manyLocals is a code section of one function that declares n locals of
// type i32 and does nothing.
func manyLocals(n string) string { return "\x01" + string(rune(len(n)+3)) + "\x01" + n + "\x7f\x0b" }

// TestCheckRefusesWhatTheDecoderWouldAllocateFor: modules of a few bytes
// that declare more than they hold, each of which made wazero's decoder
// ask for gigabytes (the first, 480 GB, ends the process) or, for a body
// its locals outgrow, for -1 bytes (a panic), are refused, saying what
// they declare.
func TestCheckRefusesWhatTheDecoderWouldAllocateFor(t *testing.T) {
	t.Parallel()
	m := wasmtest.Module
	const many = "\xff\xff\xff\xff\x0f" // 4,294,967,295
	tests := []struct {
		name string
		wasm []byte
		want string
	}{
		{"imports", m(2, many),
			"wasmlimits: section 2: it declares 4294967295 imports, with 0 bytes left to hold them"},
		{"results of a type", m(1, "\x01\x60\x00\x80\x80\x80\x80\x01\x7f"),
			"wasmlimits: section 1: types 0: it declares 268435456 results, with 1 bytes left to hold them"},
		{"a section's bytes", []byte("\x00asm\x01\x00\x00\x00\x00" + many + "\x01a"),
			"wasmlimits: section 0: it declares 4294967295 bytes, with 2 bytes left to hold them"},
		{"a data segment's bytes", m(11, "\x01\x01"+many),
			"wasmlimits: section 11: data segments 0: it declares 4294967295 bytes of data, with 0 bytes left to hold them"},
		{"a function body's bytes", m(10, "\x01"+many),
			"wasmlimits: section 10: functions 0: it declares 4294967295 bytes of a function body, with 0 bytes left to hold them"},
		{"locals", m(10, manyLocals(many)),
			"wasmlimits: section 10: functions 0: local declarations 0: more than 50000 locals, the limit"},
		{"function names", m(0, "\x04name\x01\x05"+many),
			"wasmlimits: section 0: it declares 4294967295 function names, with 0 bytes left to hold them"},
		{"an export's name", m(7, "\x01"+many),
			"wasmlimits: section 7: exports 0: it declares 4294967295 bytes of a name, with 0 bytes left to hold them"},
		{"a table's elements", m(4, "\x01\x70\x00\x80\x80\x80\x40"),
			"wasmlimits: section 4: tables 0: a table of 134217728 elements, past the limit of 10000000"},
		{"a body its locals outgrow", m(10, "\x01\x03\x01\x01\x63\x00"),
			"wasmlimits: section 10: functions 0: a body of 3 bytes, whose locals take 4"},
		{"element indexes", m(9, "\x01\x00\x41\x00\x0b"+many),
			"wasmlimits: section 9: element segments 0: it declares 4294967295 function indexes, with 0 bytes left to hold them"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Check(tt.wasm); err == nil || err.Error() != tt.want {
				t.Fatalf("Check: %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestCheckTakesRealModules: Go guests, as a user builds them, and the
// rewriter's small modules pass.
func TestCheckTakesRealModules(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{"examples/wasm/hello", "host/testdata/guests/hostile"} {
		wasm, err := guestbuild.Wasm(pkg)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(wasm); err != nil {
			t.Errorf("%s: %v", pkg, err)
		}
	}
	m := wasmtest.Module
	for _, wasm := range [][]byte{
		m(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 6, wasmtest.GlobalSec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec, 11, wasmtest.ActiveData),
		m(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 12, "\x01", 10, wasmtest.CodeSec, 11, wasmtest.PassiveData),
		m(10, manyLocals(strings.Repeat("\x80", 2)+"\x03")), // 49,152 locals
	} {
		if err := Check(wasm); err != nil {
			t.Errorf("%q: %v", wasm, err)
		}
	}
}
