// Package layout holds the test that keeps the project's imports flowing one
// way, as DESIGN.md draws them: guest-sdk → abi, engine → abi,
// store → engine, host → engine, abi, store. It has no code of its own.
package layout
