// Package host runs Durabox orchestrations: it validates and stores modules,
// starts instances, and drives them turn by turn on a store.Store, in a
// WebAssembly sandbox whose every answer to the guest is a function of
// history.
//
// # How a turn runs
//
// An orchestration dispatcher (one fetcher feeding
// Options.OrchestrationWorkers workers) locks an instance that has
// messages, takes its live wasm instance from a bounded cache (or starts a
// fresh one on the exact module the instance started with, and replays its
// history), drives the engine's turn (engine.Execution.Begin, then
// Turn.Next and Turn.Answer for each activation its guest applies, then
// Turn.Result), puts the live instance back in the cache (or closes it,
// when the instance finished or continued as new), and then commits the
// history delta, the new activity tasks and timers, the status and the
// removal of the consumed messages in one store transaction: the commit
// lets the next turn run, on any worker, and that turn finds the instance
// where this one left it (Host.turn). An activity dispatcher runs
// activities in separate instances of the same module, with the real
// clock, and hands each outcome to the store (store.Store.CompleteActivity),
// which makes it a message for the instance's next turn: store/postgres
// writes it at once, store/sqlite keeps it in memory until the commit of
// that turn (which removes the activity's task) unless it is large. The
// store hands the workers the tasks of the instances in turn, and an
// attempt runs under the deadline its call set (durabox.WithTimeout), else
// Options.ActivityTimeout, and is stopped when nobody will take its result
// (its instance ended, or the orchestration cancelled it). An attempt that
// fails, when its call's retry policy allows another, goes back to the
// store instead, due after the policy's wait (Host.finish,
// store.Store.RetryActivity), and history records only the last. Timers have no
// dispatcher: they are messages that become visible when due, which the
// orchestration dispatcher takes as it takes any other. A scheduler
// (scheduler.go) fires the slots of the schedules in the store
// (CreateSchedule): each slot's run is created, and the schedule moved on,
// in one store transaction conditional on the slot (so one host fires it,
// once), and a run reads the last one's end (ctx.LastRun) from its start.
// A batch runner (batchrun.go) takes the instances of the batches in the
// store (StartBatch), each through the operation on one instance, one
// write recording each before the next, under a lease that one host
// holds at a time.
//
// # The sandbox
//
// Orchestrations run with a deterministic WASI (package
// host/internal/wasi): the wall clock reads the logical time of the event
// being applied, randomness is a stream seeded from the instance id and
// execution (the Go runtime's own, behind map order and math/rand's global
// source, is seeded while the module starts, the same in every instance),
// and there are no files, sockets, environment or arguments. Activities
// get the real clock and randomness, the module's environment, HTTP to
// allowed hosts, and a scratch directory of each attempt's own (scratch.go;
// Options.ScratchLimit).
// Output to stdout and stderr becomes log lines at the level each line's
// prefix names (abi/ABI.md, "Log lines"), tagged with the instance and its
// execution (and an activity's name, schedule id and attempt), and is
// silent while the instance replays; a line is cut at 16 KiB and a
// guest's log is rate-limited (100 lines a second, bursts of 1000), so that
// a guest's output costs the host a bounded buffer, and the log says what it
// cut or dropped. Each step of an orchestration runs under a wall-clock
// deadline (Options.ActivationTimeout), as does every call deploy makes
// into a module (its initialization, its version, its manifest); with
// Options.StepBudget (none by default) it also runs under a budget of loop
// iterations, which stops it at the same point on every replay. Every
// instance runs under a memory limit (Options.MemoryLimit). A panic, a
// deadlock, a trap, os.Exit, or a step past its deadline or its budget
// fails that instance only, with the cause in its history; the host
// carries on. So does a panic of the host's own code: at each boundary
// where it serves one thing (panics.go) it recovers the panic, ends that
// thing only, and counts it. And so does a row of a damaged database that
// does not decode (store.ErrCorrupt, a message's Corrupt): it fails its own
// instance, at once.
//
// Everything specific to a runtime (wazero, or wasmtime with
// Options.Runtime) lives in host/internal/sandbox, behind the
// sandbox.Runtime interface. A host loads a module from its store by
// making the checks Deploy makes; one that fails them (another host, on
// the other runtime or with other settings, deployed it) is a module this
// host cannot run (Refused, ErrCannotRun): it says so in its log, and
// leaves the module's instances and activity tasks waiting, untouched, for
// a host that can.
//
// # Operations
//
// Beside Deploy, Start, Raise and Wait: Cancel asks an orchestration to
// stop (it sees the request and may clean up); Terminate ends it at its
// next turn without running its code, with its children still running;
// Purge and PurgeMatching delete finished instances; RemoveModule deletes a
// module no instance runs on; List, Count, Executions and Queue answer a
// dashboard's questions; Query runs a query handler an orchestration
// registered, on its live instance or a replay of its history, writing
// nothing (instancequery.go). Raise, Cancel and Terminate refuse an instance
// that has finished (ErrFinished), and Raise a persistent event past what
// its execution may take (ErrTooManyEvents), rather than accept what would
// be dropped. StartWithEvent is signal with start: it starts an instance
// with an event raised at it in one store transaction, or only raises the
// event at the instance there. With Options.Retention, Run sweeps (Sweep) what finished, the
// executions that continued as new and the batches that ended, that long
// ago, and the records of the audit log (AppendAudit) older than that. A change asked through the
// API names its token on the event it makes (engine.Event.By). The operations
// that are not turns (these but Query, and those below) are carried out
// by package host/internal/ops (operations.go).
//
// # Changing code under running instances
//
// An instance runs on the module it started with (Start picks the newest
// that registers its orchestration; StartOn another). Because the sandbox
// answers every call from history, a replay has no side effects: Replay
// replays an instance on any module and reports where it diverges;
// Upgrade replays every open instance of one module on another, while the
// host serves, and moves exactly those it reproduces, each move a
// ModuleChanged event committed with the module change, fenced against a
// concurrent turn (store.MoveInstance); Reset starts a new execution from
// an event of the current one on patched code (store.ResetInstance);
// Export writes a repro bundle (package host/bundle), which a Replayer
// replays with no store at all, as durabox replay does and package
// host/replaytest does in an author's go test.
//
// # Checking a module, and driving a host by hand
//
// CheckModule makes Deploy's checks on each runtime with no store (durabox
// check). A Probe is a module so checked whose orchestrations a caller
// runs on the raw ABI, handing its wasm instances activations it wrote
// itself. RunTurns and RunActivities run, in the calling goroutine and in
// place of Run's dispatchers, the turns and activity tasks due at a time
// the caller gives, so that a caller decides which work runs when: the
// guest conformance kit (package host/guestkit, durabox conformance) uses
// all three, and the host's own tests the last two.
//
// # Metrics and readiness
//
// Metrics (package host/metrics) count turns, starts, ends, activities and wasm
// instances, time turns and activities, and read the queue and the live
// cache when gathered; the store reports its commits to
// Metrics.ObserveCommit. Ready says whether the host serves its work: Run
// has loaded the modules its waiting work runs on, and the store answers
// Ping.
//
// # Tracing
//
// With Options.TraceExporter, the host makes an OpenTelemetry span of
// each turn, activity attempt (its own, and a worker's, whose lease
// carries the span's W3C traceparent: api.Task.Traceparent), update,
// query and schedule firing, and of each instance when it ends, all of one
// instance's in the trace whose id is derived from the instance's id
// (tracing.go, docs/tracing.md); an activity's HTTP requests carry its
// attempt's traceparent. Without one it makes none, at no cost.
//
// # Usage
//
//	m := metrics.New()
//	st, _ := sqlite.Open("durabox.db", sqlite.Options{OnCommit: m.ObserveCommit})
//	h, _ := host.New(st, host.Options{Logger: logger, Metrics: m, Retention: 30 * 24 * time.Hour})
//	go h.Run(ctx)
//	h.Deploy(ctx, wasm)
//	id, _ := h.Start(ctx, "Greeting", json.RawMessage(`"world"`), "")
//	inst, _ := h.Wait(ctx, id)
//
// Package host/server serves the same operations over HTTP
// (server.New(h, server.Options{Metrics: m})), for the durabox CLI and
// package host/client; the wire types are package host/api's.
package host
