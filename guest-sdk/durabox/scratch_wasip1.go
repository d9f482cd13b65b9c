//go:build wasip1

package durabox

import (
	"errors"
	"os"
)

// scratchDir answers ScratchDir in the host's wasm sandbox: the host
// preopens scratchPath in an activity's instance when it gives scratch
// space, and looking for it costs the attempt no directory.
func scratchDir() (string, error) {
	if info, err := os.Stat(scratchPath); err != nil || !info.IsDir() {
		return "", errors.New("durabox: ScratchDir: the host gives this activity no scratch directory (durabox serve --scratch-mib 0, or a host older than scratch space)")
	}
	return scratchPath, nil
}
