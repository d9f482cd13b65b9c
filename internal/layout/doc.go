// Package layout holds the test that keeps the project's imports flowing one
// way, as DESIGN.md draws them: guest-sdk → abi, engine → abi,
// store → engine, host → engine, abi, store; and the SDK's test kit,
// guest-sdk/durabox/durtest, the one SDK package that may use the engine
// (it runs orchestrations natively in go test and never goes into a
// module). It has no code of its own.
package layout
