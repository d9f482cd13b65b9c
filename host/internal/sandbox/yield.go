package sandbox

// A call must stop when its context ends, even in an endless loop, and
// meanwhile must not hold up the host: Go's runtime cannot preempt compiled
// guest code, and a garbage collection waits until every goroutine it runs
// on comes to a stop. wazero can stop a call itself
// (WithCloseOnContextDone), and does it by leaving the compiled code for Go
// at every loop header; but a Go guest enters a loop in every function it
// calls, so that made guest code four to five times slower. A module
// rewritten by package wasmrewrite does it every wasmrewrite.YieldEvery
// loop iterations instead: it calls its own import of WASI's sched_yield,
// a host function (package wasi). Calling it goes through Go, where the
// runtime can stop the goroutine, and it stops the call, with its context's
// error, once that context has ended. A module the rewrite refuses runs on
// the guarded runtime, which wazero stops itself.
