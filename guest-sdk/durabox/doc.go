// Package durabox is the Go SDK for writing Durabox orchestrations and
// activities. A module built with it is compiled to WebAssembly and deployed
// to a Durabox host, which runs every orchestration durably: each step is
// recorded, and after a crash the orchestration is replayed from its history
// and carries on where it was.
//
// # A module
//
//	package main
//
//	import (
//		"context"
//		"github.com/durabox/durabox/guest-sdk/durabox"
//	)
//
//	func init() {
//		durabox.RegisterOrchestration("Greeting", Greeting)
//		durabox.RegisterActivity("SayHello", SayHello)
//	}
//
//	func Greeting(ctx *durabox.Context, name string) (string, error) {
//		return durabox.Call[string](ctx, "SayHello", name)
//	}
//
//	func SayHello(ctx context.Context, name string) (string, error) {
//		return "Hello, " + name + "!", nil
//	}
//
//	func main() {}
//
// Register in init: the module is a WebAssembly reactor, so main never runs
// (it must exist for the build).
//
// # The author's loop
//
//	durabox new hello         # a project: go.mod, main.go, main_test.go, README.md
//	go test ./...             # unit tests, natively, with package durtest
//	durabox build             # hello.wasm, checked as a host checks it at deploy
//	durabox deploy hello.wasm # to a host (durabox serve --db durabox.db)
//	durabox start Greeting --input '"world"' --wait
//	durabox history ID        # every step the instance took
//
// durabox build runs GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared
// -trimpath. Package durtest (guest-sdk/durabox/durtest) runs
// orchestrations in go test under the host's own replay engine, with mock
// activities, a fake clock, events, cancellation and children, and checks
// that every history it produces replays. The SDK's README
// (guest-sdk/README.md) walks the loop step by step.
//
// # Orchestrations are replayed
//
// An orchestration function runs again from the beginning whenever its
// instance is replayed (after a restart, or when the host evicts it from
// memory), and must make the same decisions each time. The host's replay
// engine checks every activity call and timer against the recorded history
// and fails the instance with a nondeterminism error if they differ.
//
// The sandbox makes most of the usual sources of nondeterminism safe by
// construction, so inside an orchestration:
//
//   - time.Now returns the logical time of the step being applied (the same
//     on every replay); ctx.Now says the same.
//   - randomness repeats exactly on replay. ctx.Rand, crypto/rand and
//     ctx.NewGUID differ per instance (they are seeded from the instance id
//     and its execution); math/rand's and math/rand/v2's global functions
//     and map iteration order are one stream, the same in every instance of
//     a module (the Go runtime seeds it while the module starts). Draw
//     what must differ between instances from ctx.Rand.
//   - the heap replays too: memory statistics (runtime.ReadMemStats), when
//     collections run and which finalizers have run, goroutine ids and
//     runtime.NumGoroutine, and the order in which goroutines started with
//     a go statement are scheduled are the same live, on a replay in a
//     fresh instance and on a replay after every step, because a replay
//     makes the same calls into the guest with the same bytes, and the SDK
//     does the same work in both.
//   - files, sockets, environment variables and arguments do not exist
//     (an activity has its attempt's ScratchDir, and the module's
//     environment).
//   - fmt.Println, the log package and ctx.Logger write to the instance's
//     log; the host drops what is written while replaying, so each line is
//     logged once (durabox replay of a repro bundle shows them all).
//     ctx.Logger's records, and ActivityLogger's in activities, are
//     logged at their level, so durabox serve --log-level warn keeps
//     their warnings and errors; other output is logged at info.
//   - an endless loop, unbounded allocation, recursion past 4 MiB of stack,
//     a deadlock, os.Exit, runtime.Goexit or a panic fail that instance
//     only, with the cause in its history; so does an orchestration left
//     waiting on nothing (neither returned nor waiting on any activity,
//     timer, event or child), which could never be woken.
//   - the time package's clock stands still within a step, and its timers
//     could neither fire when due nor survive a restart, so none may
//     outlive the step that starts it. time.Sleep, and a wait on a timer
//     or a ticker's channel, fail the instance at once ("the orchestration
//     blocked on time.Sleep or a timer of the time package"). A step that
//     ends with a timer of the time package still running fails the
//     instance, naming the call: time.AfterFunc; time.NewTimer or
//     time.After (a select with a default that polls its channel);
//     time.NewTicker or time.Tick; context.WithTimeout or
//     context.WithDeadline (whose context starts a timer, running until
//     it is cancelled). A timer stopped within the step that started it
//     (Timer.Stop, Ticker.Stop, the CancelFunc of a context) is fine, and
//     so is the one crypto/rand's first read starts and stops. Use
//     ctx.Sleep and ctx.NewTimer, raced with ctx.Select, instead; run code
//     when a durable timer fires in a branch (ctx.Go). (The host finds
//     these timers by the function names a Go module carries, which
//     go build -ldflags=-s strips; durabox build keeps them.)
//
// What remains the author's job:
//
//   - Do I/O and anything with side effects in activities, never in the
//     orchestration itself.
//   - Use the Context and its futures only from the orchestration function
//     and from branches started with ctx.Go, which run one at a time in an
//     order that replays; wait for a branch with the future ctx.Go returns.
//     A goroutine started with a go statement may compute, but the moment
//     it touches the Context or a future, the instance fails with a message
//     that says so.
//   - Do not block on channels, mutexes or WaitGroups that nothing in the
//     orchestration will release: use futures. (A branch runs only while
//     the others wait on futures, so a channel between branches
//     deadlocks.)
//   - ctx.HistoryLength, ctx.HistorySize and ctx.ShouldContinueAsNew say
//     how long the history was when the step first ran, the same on every
//     replay: decide by them when to ContinueAsNew.
//   - ctx.IsReplaying is the one thing that differs between the first run
//     of a step and its replays: false while the host applies the steps the
//     current turn records, true while it re-applies steps recorded in an
//     earlier turn. Use it only to guard side effects outside history; what
//     runs under it changes the heap, so an orchestration that decides by
//     its heap must not use it.
//   - Changing the order or arguments of activity calls (their options,
//     such as WithTimeout and WithRetry, and the module's
//     DefaultRetryPolicy, included) and timers changes
//     the orchestration; an instance runs on the exact module it started
//     with until durabox upgrade moves it to a new module whose code
//     replays its history. (A module built with another Go version or SDK
//     is another module: its heap, among the rest, differs.) Where new code
//     must differ from what running instances did, ask Context.Patched,
//     which keeps the old path for instances that took it and records the
//     new one. durtest.Replay tells whether changed code still replays a
//     history a host recorded (durabox history ID --json).
//
// Activities are ordinary Go: they run in separate instances of the same
// module with the real clock and real randomness, and may fail; their
// failures reach the orchestration as *ActivityError, whose Type is the
// error's type when the activity named one (NewError). A call with a retry
// policy (WithRetry, or the module's DefaultRetryPolicy) is retried by the
// host, and history records its one outcome, with the attempts
// (ActivityError.Attempts); CallWithRetry retries in the orchestration
// instead, every attempt and wait in history. An activity that processes
// files writes them in its attempt's own directory, ScratchDir
// (/scratch), which the host removes when the attempt ends.
//
// # Waiting, racing and cancelling
//
// A future is one operation's result: Get waits for it, Select waits for
// the first of several and cancels the rest (each cancellation recorded),
// SelectKeep waits for the first and leaves the rest running. Await waits
// for a condition on the orchestration's own state, which its branches
// change: it is checked again after every step the host applies, and
// records nothing itself; AwaitWithTimeout adds a durable timer. Mutex, a
// lock for branches granted in the order asked, is built on it. WithCancel
// makes a cancellation scope: a Context whose open operations one call
// cancels together, each recorded as a lost Select's is, and through which
// nothing starts once it is cancelled.
//
//	var ready bool
//	ctx.Go(func(ctx *durabox.Context) { ready = ctx.WaitEvent("Ready").Get(nil) == nil })
//	ok, err := ctx.AwaitWithTimeout(time.Hour, func() bool { return ready })
//
// # Queries
//
// An orchestration answers questions about its state with HandleQuery:
// a client asks (durabox query ID NAME --data JSON) and gets the handler's
// answer, and nothing is written. A handler only reads the variables it
// captures: one that uses the Context or a future (to schedule, wait, set
// the custom status, read the clock) or panics fails the query, never the
// instance. A module built before HandleQuery existed has no query export,
// and a host refuses queries to its instances with a message saying so.
//
// # Updates
//
// An orchestration takes requests that change it with HandleUpdate: a
// client sends one (durabox update ID NAME --data JSON) and gets the
// handler's answer on the same call. The handler runs as a branch (see
// Go), may use the Context like any branch, and its acceptance and answer
// are recorded in history. Its validator (WithValidator), like a query's
// handler, only reads, and refuses an update before anything of it is
// recorded; an update the instance has no handler of is refused too. An
// orchestration that ends, or continues as new, answers the updates whose
// handlers still run with an error: ctx.Await(ctx.AllHandlersFinished)
// waits for them first.
//
// # Names, texts and JSON
//
// A host holds what a module hands it to one rule (abi.CheckName,
// abi.CheckText), the same live and on every replay:
//
//   - a name (of an orchestration or an activity, an event, a change id
//     for Patched, a child's instance id) is 1 to 256 bytes
//     (abi.MaxNameBytes) of UTF-8 without control characters.
//     RegisterOrchestration and RegisterActivity panic on another, since a
//     host would refuse the module at deploy; an orchestration that uses
//     one elsewhere fails its instance, naming it and the rule.
//   - a text (a custom status, an error's message) is UTF-8; an
//     orchestration that returns an error whose message is not, or sets
//     such a custom status, fails with a message that says so, and an
//     activity's attempt fails the same way.
//   - JSON (inputs, results, event data) is I-JSON (RFC 7493): UTF-8, no
//     lone surrogate escape such as \ud800, no name twice in an object.
//     What encoding/json writes for Go values always is; a MarshalJSON of
//     your own must keep to it too.
package durabox
