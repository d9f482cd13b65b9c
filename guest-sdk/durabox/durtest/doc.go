// Package durtest runs Durabox orchestrations in go test: natively, without
// WebAssembly and without a host, but driven by the host's own replay
// engine (package engine), so an orchestration that behaves here behaves
// the same deployed. It is the one package of the SDK that imports the
// engine; it is for tests only and never goes into a module.
//
// # A test
//
//	func TestGreeting(t *testing.T) {
//		env := durtest.New(t, durtest.Options{})
//		inst := env.Start("Greeting", "world")
//		var got string
//		if err := inst.Result(&got); err != nil {
//			t.Fatal(err)
//		}
//		if got != "Hello, world!" {
//			t.Fatalf("got %q", got)
//		}
//	}
//
// The orchestrations and activities are those the package under test
// registers in its init functions. An Env is a host in miniature: it runs
// each instance turn by turn with the engine, keeps its history (the events
// durabox history would show), runs the activities the orchestration calls
// (the module's own, or mocks from MockActivity), starts and cancels
// children, continues instances as new, and tells parents how their
// children ended, as a host's store does. After every call that changes
// something, everything that can happen at the current time has happened;
// then the test looks (Status, Result, History, CustomStatus, Dropped) or
// acts:
//
//   - Raise and RaisePersistent raise an event now, as durabox raise does;
//     Cancel requests a cancellation, as durabox cancel does; Query runs a
//     query handler, as durabox query does, and records nothing.
//   - The clock is fake and moves only when the test says: Advance(d)
//     fires every timer due on the way, each at its due time; AdvanceToNext
//     jumps to the next thing due; Instance.AdvanceToEnd jumps until the
//     instance ends (retries with backoff, say).
//   - ActivityTakes makes an activity's result arrive later on the fake
//     clock, and After runs a function at a chosen moment, so a test can
//     raise an event or cancel while an activity runs.
//   - StartRun starts an instance as a schedule's run, with the last run's
//     result or failure for ctx.LastRun.
//
// When the test ends, the Env replays every history it produced on a fresh
// runtime, as a host does when it drops an instance from memory, and
// reports a divergence as a test error. Replay checks a history recorded
// by a host (durabox history ID --json, read with ReadHistory) against the
// code as it is now: keep the histories of instances that run a long time
// under testdata/, and a change that would break them fails a test before
// it is deployed.
//
// # What is the same as on a host, and what is not
//
// The same: the engine and the SDK's runtime, so the history (event kinds,
// names, inputs, results, failures, schedule ids, the delays of timers),
// the rules about events (positional events go to the oldest active wait
// or are dropped; persistent ones wait in a mailbox and carry over on
// continue-as-new), selects and their cancellations, children and their
// ids ("PARENT~EXECUTION:EVENT"), continue-as-new, retries (CallWithRetry's
// timers, and a retry policy's attempts, each after its wait on the fake
// clock, with one outcome in history), custom status, search attributes,
// events raised between instances (ctx.Raise: delivered with the turn that
// raised them, their outcome in the sender's history),
// the determinism check, and the failure of an orchestration that uses its
// Context from a goroutine not started with ctx.Go, or that is left
// waiting on nothing. Times differ: on the fake clock an event is recorded
// at the fake time of its turn, a timer fires exactly when due, and an
// activity takes no time unless ActivityTakes says.
//
// Not the same, because the code runs natively instead of in the sandbox:
//
//   - time.Now, math/rand, crypto/rand and map iteration order are the
//     process's own, not functions of history. Use ctx.Now, ctx.Rand and
//     ctx.NewGUID (which behave as in a module), and iterate maps in
//     sorted order: the end-of-test replay
//     then stays clean, as it would on a host.
//   - A step that blocks (on a channel, a lock or time.Sleep) or loops
//     fails its instance after Options.StepTimeout of real time, where a
//     host reports a deadlock or a blocking sleep at once. There is no
//     memory limit, and os.Exit ends the test binary.
//   - Each activity runs once per attempt: a host runs activities at
//     least once, and may run one again after a crash.
//   - When several things happen at one moment, the kit runs them one at
//     a time (the turn of the instance with the oldest message first, then
//     each activity due, in the order they were called); a host runs them
//     concurrently, so the order of their events in a history can differ
//     where they raced, as it can between two runs on a host.
//
// So a test here checks an orchestration's logic and how it uses the SDK;
// durabox build checks the module as a host will load it.
package durtest
