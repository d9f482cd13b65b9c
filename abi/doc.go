// Package abi is the wire contract between the Durabox host and a guest
// module: the names of the exports a guest provides, the messages that cross
// the boundary, and their codec.
//
// The contract is deliberately narrow. The host sends an Activation (the
// logical time and the jobs to apply, in history order) and receives the
// Commands the guest's orchestration code emitted while it ran to quiescence.
// The guest never decides what matches history: the host's replay engine
// does. ABI.md in this directory specifies the byte layout well enough to
// write a guest SDK in another language.
//
// This package imports only the standard library, because both the host and
// the guest SDK (compiled to wasip1/wasm) import it.
package abi
