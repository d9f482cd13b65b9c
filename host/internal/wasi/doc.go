// Package wasi implements WASI preview 1 (module wasi_snapshot_preview1) for
// Durabox guests, once, independent of the wasm runtime that calls it: a
// runtime registers Functions (and the host's capability modules, see
// Modules) and passes each call the calling instance's Env and a Memory.
//
// An Env is deterministic (orchestrations: every answer is a function of a
// 32-byte seed, of the logical time the host sets before each call with
// SetTime, and of what the guest did before) or real (activities: the real
// clock, real randomness, the environment variables of the deployment).
// Neither has sockets. An instance has stdin (always at its end), stdout
// and stderr (the Env's writers); a real Env that OfferScratch made has a
// preopened directory too, fd 3, ScratchPath, whose files are those of the
// Scratch of the attempt it runs (SetScratch): a directory of the host's,
// made on the attempt's first use and removed by Scratch.Close, its paths
// held inside it and its bytes to a budget (files.go, scratch.go). A
// deterministic Env has no files at all.
//
// The runtime's part of the contract:
//
//   - proc_exit panics with *ExitError; poll_oneoff may panic with
//     ErrBlockingSleep. The runtime turns either panic into the end of the
//     call, with that error.
//   - After every call into the guest it calls Env.TakeSleep: a call of a
//     deterministic guest that waited on the clock fails with
//     ErrBlockingSleep, even if the guest returned normally.
//
// Why not stop the call at the first wait? The Go runtime itself waits 1 ms
// twice (freezetheworld) while it dies of a panic or a fatal error such as a
// deadlock, before it prints why; stopping there would report every crash as
// a sleep and lose its message. So a deterministic wait never blocks: the
// monotonic clock jumps to its end and the guest carries on, and only a
// guest that waits more than 64 times in one call (a polling loop) is
// stopped at once.
//
// The answers, function by function, are in the ABI's reference
// (abi/ABI.md, "WASI functions"), where a guest's author reads them; a test
// holds its table to Functions.
package wasi
