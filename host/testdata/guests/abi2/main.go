// Command abi2 is a module that has every export of the Durabox ABI but says
// it speaks version 2; deploying it must be refused.
package main

//go:wasmexport durabox_abi_version
func version() int32 { return 2 }

//go:wasmexport durabox_alloc
func alloc(int32) int32 { return 0 }

//go:wasmexport durabox_describe
func describe() int64 { return 0 }

//go:wasmexport durabox_activate
func activate(int32, int32) int64 { return 0 }

//go:wasmexport durabox_activity
func activity(int32, int32) int64 { return 0 }

func main() {}
