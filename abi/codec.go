package abi

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The encoding is a sequence of fields. Each field starts with a key, an
// unsigned varint holding (field number << 1 | wire type). Wire type 0 is an
// unsigned varint value; wire type 1 is a length-prefixed byte string (an
// unsigned varint length, then the bytes). Nested messages and repeated
// fields are byte strings, the latter repeated once per element. Decoders
// skip fields whose number they do not know, so adding a field is not a
// breaking change. Every message's fields are described once, in the table
// of package abi/internal/spec, from which codec_gen.go and ABI.md's field
// tables are generated.

const (
	wireVarint = 0
	wireBytes  = 1
)

// maxMessage bounds any single message, so a corrupt length can never make a
// decoder allocate without limit.
const maxMessage = 64 << 20

// ErrMalformed is returned (wrapped) when bytes do not decode as the expected
// message.
var ErrMalformed = errors.New("abi: malformed message")

type encoder struct{ buf []byte }

// hotSize is the buffer an activation and its result start encoding into:
// room for the usual few jobs or commands, so that the one encoding a
// replay does per event does not grow its buffer again and again.
const hotSize = 128

func (e *encoder) key(field, wire uint64) { e.buf = binary.AppendUvarint(e.buf, field<<1|wire) }

func (e *encoder) uint(field, v uint64) {
	if v == 0 {
		return
	}
	e.key(field, wireVarint)
	e.buf = binary.AppendUvarint(e.buf, v)
}

func (e *encoder) int(field uint64, v int64) {
	// Zigzag, so that small negative numbers stay small.
	e.uint(field, uint64(v<<1)^uint64(v>>63))
}

func (e *encoder) bool(field uint64, v bool) {
	if v {
		e.uint(field, 1)
	}
}

// flag writes a bool field even when it is false, so that the message has
// the same size and shape either way.
func (e *encoder) flag(field uint64, v bool) {
	e.key(field, wireVarint)
	if v {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

func (e *encoder) bytes(field uint64, v []byte) {
	if len(v) == 0 {
		return
	}
	e.key(field, wireBytes)
	e.buf = binary.AppendUvarint(e.buf, uint64(len(v)))
	e.buf = append(e.buf, v...)
}

func (e *encoder) string(field uint64, v string) {
	if v == "" {
		return
	}
	e.element(field, v)
}

// element writes one element of a repeated string field, even an empty
// one: each element appears, in order (ABI.md, "Encoding").
func (e *encoder) element(field uint64, v string) {
	e.key(field, wireBytes)
	e.buf = binary.AppendUvarint(e.buf, uint64(len(v)))
	e.buf = append(e.buf, v...)
}

// message encodes a nested message. It is written even when empty, because
// its presence can matter (a repeated element, a non-nil Failure). The
// message is encoded in place after one byte kept for its length, so that
// no second buffer is allocated; only a message of 128 bytes or more, whose
// length takes more than that byte, is then moved up to make room.
func (e *encoder) message(field uint64, encode func(*encoder)) {
	e.key(field, wireBytes)
	e.buf = append(e.buf, 0)
	start := len(e.buf)
	encode(e)
	size := uint64(len(e.buf) - start)
	if size < 0x80 {
		e.buf[start-1] = byte(size)
		return
	}
	var length [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(length[:], size)
	e.buf = append(e.buf, length[:n-1]...)
	copy(e.buf[start+n-1:], e.buf[start:len(e.buf)-(n-1)])
	copy(e.buf[start-1:], length[:n])
}

// fields walks the fields of one message:
//
//	r := readFields(b, "Job")
//	for r.next() {
//		switch r.field { … }
//	}
//	return r.err
//
// For a varint field v is the value and raw nil; for a byte field v is the
// length and raw the bytes. (A loop rather than a callback per field:
// every call costs a wasm guest, where this decodes each activation.)
type fields struct {
	b     []byte
	what  string
	field uint64
	v     uint64
	raw   []byte
	err   error
}

func readFields(b []byte, what string) fields {
	f := fields{b: b, what: what}
	if len(b) > maxMessage {
		f.err = fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", ErrMalformed, what, len(b), maxMessage)
	}
	return f
}

// next reads the next field and reports whether there was one; at the end,
// or at bytes that do not decode (then err says why), it returns false.
func (f *fields) next() bool {
	if f.err != nil || len(f.b) == 0 {
		return false
	}
	k, n := binary.Uvarint(f.b)
	if n <= 0 {
		f.err = fmt.Errorf("%w: %s: bad field key", ErrMalformed, f.what)
		return false
	}
	f.b = f.b[n:]
	f.field = k >> 1
	f.v, n = binary.Uvarint(f.b)
	if n <= 0 {
		f.err = fmt.Errorf("%w: %s: field %d: bad value", ErrMalformed, f.what, f.field)
		return false
	}
	f.b = f.b[n:]
	f.raw = nil
	if k&1 == wireBytes {
		if f.v > uint64(len(f.b)) {
			f.err = fmt.Errorf("%w: %s: field %d: length %d runs past the end", ErrMalformed, f.what, f.field, f.v)
			return false
		}
		f.raw, f.b = f.b[:f.v:f.v], f.b[f.v:]
	}
	return true
}

func unzigzag(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }

// clone copies decoded bytes so a decoded message never aliases the buffer
// it came from (guest memory, on the host side).
func clone(raw []byte) []byte {
	if len(raw) == 0 {
		return nil
	}
	return append([]byte(nil), raw...)
}

// The messages' own encoders and decoders (encodeX, decodeX), and the
// exported functions of most, are generated from the table in package
// abi/internal/spec, in codec_gen.go. The activation and its result, which
// every step of every orchestration encodes and decodes, have these of
// their own, which spare the guest allocations.

// EncodeActivation encodes a. Replaying is written whatever its value, so
// that an activation is the same size live and on replay: a guest that
// received more bytes on replay would allocate more, and an orchestration
// that reads its heap would see the difference.
func EncodeActivation(a *Activation) []byte {
	e := encoder{buf: make([]byte, 0, hotSize)}
	encodeActivation(&e, a)
	return e.buf
}

// DecodeActivation decodes an Activation.
func DecodeActivation(b []byte) (*Activation, error) {
	a := &Activation{}
	if err := DecodeActivationInto(a, b); err != nil {
		return nil, err
	}
	return a, nil
}

// DecodeActivationInto decodes an Activation into a, whose slice of jobs it
// reuses: a guest that decodes every activation into the same one
// allocates no Activation and no slice for them.
func DecodeActivationInto(a *Activation, b []byte) error {
	clear(a.Jobs)
	*a = Activation{Jobs: a.Jobs[:0]}
	return decodeActivation(b, a)
}

// EncodeActivationResult encodes r.
func EncodeActivationResult(r *ActivationResult) []byte {
	return AppendActivationResult(make([]byte, 0, hotSize), r)
}

// AppendActivationResult appends the encoding of r to b and returns the
// extended buffer: a guest that keeps its buffer from one activation to the
// next allocates none.
func AppendActivationResult(b []byte, r *ActivationResult) []byte {
	e := encoder{buf: b}
	encodeActivationResult(&e, r)
	return e.buf
}

// DecodeActivationResult decodes an ActivationResult.
func DecodeActivationResult(b []byte) (*ActivationResult, error) {
	res := &ActivationResult{}
	if err := decodeActivationResult(b, res); err != nil {
		return nil, err
	}
	return res, nil
}
