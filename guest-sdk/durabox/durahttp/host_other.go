//go:build !wasip1

package durahttp

import "errors"

// hostHTTP fails outside WebAssembly: only a Durabox host performs requests.
func hostHTTP([]byte) ([]byte, error) {
	return nil, errors.New("durahttp: HTTP through the host works only in a module running in a Durabox host")
}
