//go:build !(wasm || amd64 || arm64)

package durabox

import goruntime "runtime"

// goroutine identifies the calling goroutine by the id in the header of its
// stack trace ("goroutine 7 [running]:"). This is slow; guests are wasm and
// the SDK's tests run natively on amd64 or arm64, which read it directly
// (goroutine.go).
func goroutine() uintptr {
	var buf [32]byte
	n := goruntime.Stack(buf[:], false)
	id := uintptr(0)
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uintptr(c-'0')
	}
	return id
}
