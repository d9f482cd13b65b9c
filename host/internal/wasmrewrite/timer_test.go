package wasmrewrite

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/durabox/durabox/host/internal/wasmrewrite/wasmtest"
)

// timerModule is a module whose functions have the names of some of the
// functions the rewrite marks, as a Go module's do, and call each other as
// they do; each is exported as the string of its number. Function 1 is
// time.newTimer; 2 time.AfterFunc, which calls 1; 3 context.WithTimeout,
// which calls 2; 4 a function into which time.After was inlined, which
// calls 1; 5 a function that starts no timer; 6 time.stopTimer; 7 a
// function that starts a timer with 2 and stops it with 6; 8 time.goFunc,
// which runs an AfterFunc timer's function when it fires; 9
// runtime.morestack_noctxt, which each of the others (but 4 and 5, which
// are not marked) calls in a stack check, as Go's prologue does; 10
// time.NewTimer, whose stack check is missing.
func timerModule() []byte {
	const check = "\x41\x00\x04\x40\x10\x09\x0b" // i32.const 0, if, call 9, end
	bodies := []string{check, check + "\x10\x01", check + "\x10\x02", "\x10\x01", "", check, "\x10\x02\x10\x06", check, "", "\x10\x01"}
	names := []string{"time.newTimer", "time.AfterFunc", "context.WithTimeout", "main.waits", "main.idles", "time.stopTimer", "main.startsAndStops", "time.goFunc", "runtime.morestack_noctxt", "time.NewTimer"}
	funcs, code, exports, nameMap := "", "", "\x0b_initialize\x00\x05", ""
	for i, b := range bodies {
		funcs += "\x00"
		code += string(rune(len(b)+2)) + "\x00" + b + "\x0b"
		exports += "\x02" + fmt.Sprintf("%02d", i+1) + "\x00" + string(rune(i+1))
		nameMap += string(rune(i+1)) + string(rune(len(names[i]))) + names[i]
	}
	n := string(rune(len(bodies)))
	nameMap = n + nameMap
	return wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, n+funcs, 5, wasmtest.MemorySec,
		7, string(rune(len(bodies)+1))+exports, 10, n+code, 0, "\x04name\x01"+string(appendU32(nil, uint32(len(nameMap))))+nameMap)
}

// TestTimerMarks: after a sequence of calls, the globals of the timer
// marks name the outermost marked function that started the first timer
// still running, or time.newTimer when none was entered; nothing when
// every timer started was stopped or fired.
func TestTimerMarks(t *testing.T) {
	t.Parallel()
	l, err := Rewrite(timerModule())
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	stubImports(t, rt, l.Wasm)
	mod, err := rt.InstantiateWithConfig(ctx, l.Wasm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	var globals []api.MutableGlobal
	for _, name := range []string{TimerCallExport, TimerExport, TimerLiveExport} {
		globals = append(globals, mod.ExportedGlobal(name).(api.MutableGlobal))
	}
	for _, tt := range []struct {
		name  string
		calls []string
		want  string
	}{
		{"no timer", []string{"05"}, ""},
		{"time.newTimer itself", []string{"01"}, "time.newTimer"},
		{"time.AfterFunc", []string{"02"}, "time.AfterFunc"},
		{"context.WithTimeout, through time.AfterFunc", []string{"03"}, "context.WithTimeout"},
		{"an inlined call", []string{"04"}, "time.newTimer"},
		{"a timer started and stopped", []string{"07"}, ""},
		{"a timer started and stopped, then one left running", []string{"07", "03"}, "context.WithTimeout"},
		{"a timer left running, then one started and stopped", []string{"02", "07"}, "time.AfterFunc"},
		{"an AfterFunc timer that fired", []string{"02", "08"}, ""},
		{"a stop of nothing running counts for nothing", []string{"06", "02"}, "time.AfterFunc"},
		{"the first of two running, one stopped", []string{"02", "03", "06"}, "time.AfterFunc"},
		{"a function without its stack check is not marked", []string{"10"}, "time.newTimer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, g := range globals {
				g.Set(0)
			}
			for _, c := range tt.calls {
				if _, err := mod.ExportedFunction(c).Call(ctx); err != nil {
					t.Fatal(err)
				}
			}
			got := ""
			if globals[2].Get() > 0 {
				got = TimerCall(uint32(globals[1].Get()))
			}
			if got != tt.want {
				t.Errorf("the timer marks name %q (%d running), want %q", got, globals[2].Get(), tt.want)
			}
		})
	}
}

// TestNoNamesNoMarks: a module without a name section is rewritten
// without marks, and so is one whose name section does not read.
func TestNoNamesNoMarks(t *testing.T) {
	t.Parallel()
	for _, wasm := range [][]byte{
		wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec),
		wasmtest.Module(1, wasmtest.TypeSec, 2, wasmtest.ImportSec, 3, wasmtest.FuncSec, 5, wasmtest.MemorySec, 7, wasmtest.ExportSec, 10, wasmtest.CodeSec,
			0, "\x04name\x01\x10\x01\x01\x7ftime.newTimer"),
	} {
		l, err := Rewrite(wasm)
		if err != nil {
			t.Fatal(err)
		}
		ids, bodies := sections(t, l.Wasm)
		// The module's own body is unchanged; $charge (charge.go) follows it.
		code := bodies[slices.Index(ids, secCode)]
		if own := wasmtest.CodeSec[1:]; len(code) < 1+len(own) || string(code[1:1+len(own)]) != own {
			t.Errorf("code section % x, want its first body unchanged (% x)", code, own)
		}
	}
}
