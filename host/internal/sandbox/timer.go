package sandbox

import (
	"github.com/durabox/durabox/host/internal/wasi"
	"github.com/durabox/durabox/host/internal/wasmrewrite"
)

// timerExports are the globals of a rewritten module's timer marks, which
// a runtime sets to zero at the start of every call, and reads after it
// with timerLeft: how many timers the call left running, and the code of
// the function that started the first.
var timerExports = []string{wasmrewrite.TimerCallExport, wasmrewrite.TimerExport, wasmrewrite.TimerLiveExport}

// timerLeft returns the function that started a timer of the time package
// that the call of export just made left running, as the timer marks'
// globals tell (live of them running, the first started by the function
// of code), if env is an orchestration's and the call is not _initialize;
// "" otherwise. An activity keeps the timers it starts, and so does a
// module's initialization, which activities share.
func timerLeft(env *wasi.Env, export string, live, code uint32) string {
	if live == 0 || !env.Deterministic() || export == initialize {
		return ""
	}
	return wasmrewrite.TimerCall(code)
}
