// Package layout holds the tests that keep the project's imports flowing one
// way, as DESIGN.md draws them: guest-sdk → abi, engine → abi,
// store → engine, host → engine, abi, store; and the SDK's test kit,
// guest-sdk/durabox/durtest, the one SDK package that may use the engine
// (it runs orchestrations natively in go test and never goes into a
// module). It holds the Go modules to the same line: abi, engine and
// guest-sdk are modules of their own whose build lists hold only each
// other (guest-sdk → engine → abi), never the host's modules, and every
// module is tidy. It also checks that engine/CONFORMANCE.md names tests
// that exist, and that every test runs in parallel with the others or
// says why it cannot. It has no code of its own.
package layout
