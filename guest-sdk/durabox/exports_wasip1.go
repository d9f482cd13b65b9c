//go:build wasip1

package durabox

import (
	"runtime/debug"
	"unsafe"

	"github.com/durabox/durabox/abi"
)

// The ABI's exports (abi/ABI.md). A wasm instance runs one orchestration
// instance, or serves activity calls; rt is created on first activation.

var (
	rt *runtime
	// in is the buffer the host last allocated to write a request into; out
	// is the last response, kept alive until the next call.
	in, out []byte
	// applied is the activation being applied, decoded into the same place
	// each time.
	applied abi.Activation
)

// keepBuffer is the largest buffer kept for the next call, for in and for
// an activation's commands in out: steps are small, and a buffer reused
// costs a guest no allocation (allocating is slow in wasm). A larger one,
// for a large payload, is dropped after its call, so that an idle instance
// does not hold it.
const keepBuffer = 64 << 10

// kept returns b emptied for reuse, or nil when b is too large to keep.
func kept(b []byte) []byte {
	if cap(b) > keepBuffer {
		return nil
	}
	return b[:0]
}

// maxStack caps each goroutine's stack. Go's default (1 GB) would let an
// endless recursion grow until the instance runs out of memory, slowly; at
// this size it stops at once with "stack overflow".
const maxStack = 4 << 20

func init() { debug.SetMaxStack(maxStack) }

//go:wasmexport durabox_abi_version
func exportVersion() int32 { return abi.Version }

//go:wasmexport durabox_alloc
func exportAlloc(size int32) int32 {
	if n, b := int(max(size, 1)), kept(in); n <= cap(b) {
		in = b[:n]
	} else {
		in = make([]byte, n)
	}
	return int32(uintptr(unsafe.Pointer(unsafe.SliceData(in))))
}

//go:wasmexport durabox_describe
func exportDescribe() int64 { return respond(abi.EncodeManifest(manifest())) }

//go:wasmexport durabox_activate
func exportActivate(addr, length int32) int64 {
	a := &applied
	if err := abi.DecodeActivationInto(a, request(addr, length)); err != nil {
		panic("durabox: the host sent an activation that does not decode: " + err.Error())
	}
	if rt == nil {
		rt = newRuntime()
	}
	cmds := rt.activate(a)
	res := respond(abi.AppendActivationResult(kept(out), rt.result(cmds)))
	rt.recycle(cmds)
	return res
}

//go:wasmexport durabox_activity
func exportActivity(addr, length int32) int64 {
	req, err := abi.DecodeActivityRequest(request(addr, length))
	if err != nil {
		panic("durabox: the host sent an activity request that does not decode: " + err.Error())
	}
	return respond(abi.EncodeActivityResult(runActivity(req)))
}

//go:wasmexport durabox_query
func exportQuery(addr, length int32) int64 {
	req, err := abi.DecodeQueryRequest(request(addr, length))
	if err != nil {
		panic("durabox: the host sent a query that does not decode: " + err.Error())
	}
	if rt == nil {
		rt = newRuntime()
	}
	return respond(abi.EncodeQueryResult(rt.query(req.Name, req.Input)))
}

// request returns the bytes the host wrote into the buffer it allocated.
func request(addr, length int32) []byte {
	if length < 0 || int(length) > len(in) || addr != int32(uintptr(unsafe.Pointer(unsafe.SliceData(in)))) {
		panic("durabox: the host passed a region it did not allocate with durabox_alloc")
	}
	return in[:length]
}

// respond keeps b alive and returns its packed region.
func respond(b []byte) int64 {
	out = b
	if len(b) == 0 {
		return 0
	}
	return int64(abi.PackRegion(uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint32(len(b))))
}
