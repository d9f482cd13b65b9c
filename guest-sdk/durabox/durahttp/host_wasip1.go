//go:build wasip1

package durahttp

import (
	"errors"
	"unsafe"
)

//go:wasmimport durabox http_request
func httpRequest(addr unsafe.Pointer, length uint32) uint32

//go:wasmimport durabox http_response
func httpResponse(addr unsafe.Pointer) uint32

// hostHTTP hands an encoded request to the host and returns the encoded
// response.
func hostHTTP(req []byte) ([]byte, error) {
	n := httpRequest(unsafe.Pointer(unsafe.SliceData(req)), uint32(len(req)))
	resp := make([]byte, max(n, 1))
	if httpResponse(unsafe.Pointer(unsafe.SliceData(resp))) != 0 {
		return nil, errors.New("durahttp: the host could not hand over the HTTP response")
	}
	return resp[:n], nil
}
