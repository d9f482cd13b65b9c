//go:build !wasip1

package durabox

import "errors"

// scratchDir answers ScratchDir outside the host's wasm sandbox.
func scratchDir() (string, error) {
	return "", errors.New("durabox: ScratchDir: this activity runs outside the host's wasm sandbox, which alone gives it " + scratchPath + "; use os.MkdirTemp")
}
