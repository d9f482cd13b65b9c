package api

import (
	"fmt"
	"strings"

	"github.com/durabox/durabox/abi"
)

// PickModule returns the hash among hashes that ref names: the hash
// itself, or a prefix of it (in either case) that no other hash has, as
// every listing shows a module's first twelve digits and the command line
// and the API take them. It returns ErrModuleNotFound when none is or
// starts with ref, and ErrBadInput, naming the candidates, when several
// start with it.
func PickModule(hashes []string, ref string) (string, error) {
	var found []string
	prefix := strings.ToLower(ref) // hashes are in lower-case hex
	for _, h := range hashes {
		if h == prefix {
			return h, nil
		}
		if prefix != "" && strings.HasPrefix(h, prefix) {
			found = append(found, h)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: no deployed module's hash is or starts with %s (durabox deploy prints a module's hash)", ErrModuleNotFound, abi.Quote(ref))
	case 1:
		return found[0], nil
	}
	for i, h := range found {
		found[i] = Short(h)
	}
	return "", fmt.Errorf("%w: %d deployed modules' hashes start with %s (%s); give more of the hash", ErrBadInput, len(found), abi.Quote(ref), strings.Join(found, ", "))
}

// Short abbreviates a module hash as every listing shows it: its first
// twelve digits.
func Short(hash string) string { return hash[:min(len(hash), 12)] }
