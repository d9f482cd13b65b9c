// Package guestkit is the guest conformance kit: the suite every guest
// SDK's conformance module passes, whatever language it is written in.
// docs/conformance.md specifies the module (its orchestrations and
// activities, and the commands each activation must answer) and lists the
// cases; durabox conformance FILE.wasm runs them for an author outside
// this repository, and an SDK's Go tests run them with one call:
//
//	guestkit.Run(t, "conformance.wasm", host.RuntimeWasmtime)
//
// Check runs the cases on each runtime and returns a Report: one Result a
// case and runtime, PASS, FAIL (with what was expected, what the module
// did and what to fix) or SKIP (a case that does not apply, such as the
// optional Queryable).
//
// There are three kinds of case. The raw cases instantiate the module in
// the host's sandbox (host.Probe) and call durabox_activate with
// activations the kit writes, checking every answer command by command,
// and checking that the same activations on a fresh instance (replaying,
// or after the kit disturbed its heap) give the same bytes. The host cases
// run the module on a real host on a temporary SQLite file, whose turns
// and activity calls the kit drives one step at a time (Host.RunTurns,
// Host.RunActivities) under a clock it moves itself, so that every run
// takes the same steps; they check how each instance ends, the shape of
// its history, and that the history replays. The last case runs the host
// cases again on a host that replays every turn on a fresh instance, and
// compares every history byte for byte.
//
// A module a host would refuse at deploy fails the first case,
// "manifest", with the host's words, and nothing else runs. One that
// lacks some of the names docs/conformance.md lists fails "manifest",
// saying which, and the cases that run them; the others run as usual.
package guestkit
