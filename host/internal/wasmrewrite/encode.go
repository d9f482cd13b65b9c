package wasmrewrite

import "encoding/binary"

// appendU32 appends v as an unsigned LEB128 number (which is what
// encoding/binary calls a uvarint).
func appendU32(b []byte, v uint32) []byte { return binary.AppendUvarint(b, uint64(v)) }

// appendS32 appends v as a signed LEB128 number.
func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendName(b []byte, s string) []byte {
	return append(appendU32(b, uint32(len(s))), s...)
}

// appendSection appends a section made of the concatenation of parts.
func appendSection(b []byte, id byte, parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b = appendU32(append(b, id), uint32(n))
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}
