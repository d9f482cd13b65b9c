package host

import "fmt"

// timerRefused is the failure of an orchestration that left a timer of the
// time package running at the end of a step, started by call (a function
// of wasmrewrite.TimerCalls): what it called, in the words its author
// wrote, and what to use instead.
func timerRefused(call string) error {
	what, instead := "time.AfterFunc, time.NewTimer, time.After, time.NewTicker, time.Tick, or a context with a deadline", "use ctx.NewTimer or ctx.Sleep, the SDK's durable timers"
	switch call {
	case "context.WithDeadline", "context.WithDeadlineCause", "context.WithTimeout", "context.WithTimeoutCause":
		what, instead = "context.WithTimeout or context.WithDeadline", "use ctx.NewTimer, and ctx.Select to race it against the work"
	case "time.AfterFunc":
		what, instead = call, "use ctx.NewTimer or ctx.Sleep (in a branch started with ctx.Go, to run code when it fires)"
	case "time.NewTimer":
		what, instead = "time.NewTimer or time.After", "use ctx.NewTimer (and ctx.Select to race it against other futures)"
	case "time.NewTicker":
		what, instead = "time.NewTicker or time.Tick", "use ctx.Sleep in a loop"
	}
	return fmt.Errorf("the orchestration left a timer of the time package running (%s), which an orchestration cannot keep: it would not fire when due, nor survive a restart; %s", what, instead)
}
