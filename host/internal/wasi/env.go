// Package wasi implements the WASI preview1 functions a Go guest imports,
// once, independent of the wasm runtime that calls them.
package wasi

// Env answers one instance's WASI calls.
type Env struct{}
