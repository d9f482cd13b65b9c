//go:build unix && !linux

package sandbox

import (
	"errors"
	"os"
)

// mmapFixed is only on Linux; elsewhere an instance started from a snapshot
// copies the snapshot's memory in.
func mmapFixed(at []byte, f *os.File) error {
	return errors.New("sandbox: no fixed file mappings on this system")
}

// writtenPages is only on Linux; elsewhere the hot pages are not learned.
func writtenPages(mem []byte) ([]uint64, error) { return nil, nil }

// populateWrite does nothing where it has no writtenPages to serve.
func populateWrite(mem []byte) {}
