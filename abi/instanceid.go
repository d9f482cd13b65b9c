package abi

import (
	"fmt"
	"unicode/utf8"
)

// MaxInstanceID is the longest instance id a user or an orchestration may
// choose, in bytes. An id the host derives for a child may be longer.
const MaxInstanceID = 128

// instanceIDRule says what CheckInstanceID accepts, for its errors.
const instanceIDRule = "an instance id is 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit"

// CheckInstanceID returns nil if id is an instance id a user (starting an
// instance) or an orchestration (starting a child with an id of its own)
// may choose: 1 to MaxInstanceID ASCII letters, digits, '.', '_', ':' or
// '-', starting with a letter or a digit. Otherwise its error says what is
// wrong with id. The ids the host derives for children
// (PARENT~EXECUTION:EVENT, see ABI.md) all hold '~', so no id chosen this
// way is ever one of them.
func CheckInstanceID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("abi: the instance id is empty; %s", instanceIDRule)
	case len(id) > MaxInstanceID:
		return fmt.Errorf("abi: instance id %.40q… is %d bytes long; %s", id, len(id), instanceIDRule)
	case !alnum(id[0]):
		return fmt.Errorf("abi: instance id %q starts with %s; %s", id, describeByte(id, 0), instanceIDRule)
	}
	for i := 1; i < len(id); i++ {
		switch c := id[i]; {
		case alnum(c) || c == '.' || c == '_' || c == ':' || c == '-':
		case c == '~':
			return fmt.Errorf("abi: instance id %q has '~', which only ids the host derives have; %s", id, instanceIDRule)
		default:
			return fmt.Errorf("abi: instance id %q has %s; %s", id, describeByte(id, i), instanceIDRule)
		}
	}
	return nil
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }

// describeByte names the character of s at byte i, or says that the bytes
// there are not UTF-8.
func describeByte(s string, i int) string {
	r, _ := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError {
		return "bytes that are not UTF-8"
	}
	return fmt.Sprintf("%q", r)
}
