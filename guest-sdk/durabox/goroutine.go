//go:build wasm || amd64 || arm64

package durabox

// goroutine identifies the calling goroutine: it returns the address of the
// runtime's descriptor of it (its g), which no other goroutine has while
// this one lives. It is read in assembly (goroutine_*.s), the way the
// runtime's own getg does: Go offers no identity of a goroutine, and
// parsing runtime.Stack's header costs some 50 µs in wasm, where this costs
// a few nanoseconds (RATIONALE.md).
func goroutine() uintptr
