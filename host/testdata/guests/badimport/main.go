// Command badimport is a module that imports functions no Durabox host
// provides; deploying it must be refused, naming them.
package main

import (
	"context"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

//go:wasmimport env mystery
func mystery() int32

//go:wasmimport wasi_snapshot_preview2 clock_now
func clockNow() int64

func init() {
	durabox.RegisterActivity("Mystery", func(context.Context, any) (int64, error) {
		return int64(mystery()) + clockNow(), nil
	})
}

func main() {}
