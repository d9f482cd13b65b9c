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
// breaking change. ABI.md lists every field number.

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

func encodeFailure(e *encoder, f *Failure) {
	e.string(1, f.Message)
	e.string(2, f.Details)
}

func decodeFailure(b []byte) (*Failure, error) {
	f := &Failure{}
	r := readFields(b, "Failure")
	for r.next() {
		switch r.field {
		case 1:
			f.Message = string(r.raw)
		case 2:
			f.Details = string(r.raw)
		}
	}
	return f, r.err
}

// EncodeActivation encodes a. Replaying is written whatever its value, so
// that an activation is the same size live and on replay: a guest that
// received more bytes on replay would allocate more, and an orchestration
// that reads its heap would see the difference.
func EncodeActivation(a *Activation) []byte {
	e := encoder{buf: make([]byte, 0, hotSize)}
	e.int(1, a.Time)
	e.flag(2, a.Replaying)
	for i := range a.Jobs {
		j := &a.Jobs[i]
		e.message(3, func(e *encoder) {
			e.uint(1, uint64(j.Kind))
			e.uint(2, j.Seq)
			e.string(3, j.Name)
			e.string(4, j.InstanceID)
			e.bytes(5, j.Input)
			e.bytes(6, j.Result)
			if j.Failure != nil {
				e.message(7, func(e *encoder) { encodeFailure(e, j.Failure) })
			}
		})
	}
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
	r := readFields(b, "Activation")
	for r.next() {
		switch r.field {
		case 1:
			a.Time = unzigzag(r.v)
		case 2:
			a.Replaying = r.v != 0
		case 3:
			j, err := decodeJob(r.raw)
			if err != nil {
				return err
			}
			a.Jobs = append(a.Jobs, j)
		}
	}
	return r.err
}

func decodeJob(b []byte) (Job, error) {
	var j Job
	r := readFields(b, "Job")
	for r.next() {
		switch r.field {
		case 1:
			j.Kind = JobKind(r.v)
		case 2:
			j.Seq = r.v
		case 3:
			j.Name = string(r.raw)
		case 4:
			j.InstanceID = string(r.raw)
		case 5:
			j.Input = clone(r.raw)
		case 6:
			j.Result = clone(r.raw)
		case 7:
			var err error
			if j.Failure, err = decodeFailure(r.raw); err != nil {
				return j, err
			}
		}
	}
	return j, r.err
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
	for i := range r.Commands {
		c := &r.Commands[i]
		e.message(1, func(e *encoder) {
			e.uint(1, uint64(c.Kind))
			e.uint(2, c.Seq)
			e.string(3, c.Name)
			e.bytes(4, c.Input)
			e.int(5, c.Delay)
			e.bytes(6, c.Output)
			if c.Failure != nil {
				e.message(7, func(e *encoder) { encodeFailure(e, c.Failure) })
			}
			e.uint(8, c.Target)
			e.string(9, c.InstanceID)
			e.bool(10, c.Detached)
			e.uint(11, c.TimeoutMillis)
		})
	}
	return e.buf
}

// DecodeActivationResult decodes an ActivationResult.
func DecodeActivationResult(b []byte) (*ActivationResult, error) {
	res := &ActivationResult{}
	r := readFields(b, "ActivationResult")
	for r.next() {
		if r.field != 1 {
			continue
		}
		c, err := decodeCommand(r.raw)
		if err != nil {
			return nil, err
		}
		res.Commands = append(res.Commands, c)
	}
	if r.err != nil {
		return nil, r.err
	}
	return res, nil
}

func decodeCommand(b []byte) (Command, error) {
	var c Command
	r := readFields(b, "Command")
	for r.next() {
		switch r.field {
		case 1:
			c.Kind = CommandKind(r.v)
		case 2:
			c.Seq = r.v
		case 3:
			c.Name = string(r.raw)
		case 4:
			c.Input = clone(r.raw)
		case 5:
			c.Delay = unzigzag(r.v)
		case 6:
			c.Output = clone(r.raw)
		case 7:
			var err error
			if c.Failure, err = decodeFailure(r.raw); err != nil {
				return c, err
			}
		case 8:
			c.Target = r.v
		case 9:
			c.InstanceID = string(r.raw)
		case 10:
			c.Detached = r.v != 0
		case 11:
			c.TimeoutMillis = r.v
		}
	}
	return c, r.err
}

// EncodeManifest encodes m.
func EncodeManifest(m *Manifest) []byte {
	var e encoder
	e.string(1, m.SDK)
	for _, n := range m.Orchestrations {
		e.string(2, n)
	}
	for _, n := range m.Activities {
		e.string(3, n)
	}
	return e.buf
}

// DecodeManifest decodes a Manifest.
func DecodeManifest(b []byte) (*Manifest, error) {
	m := &Manifest{}
	r := readFields(b, "Manifest")
	for r.next() {
		switch r.field {
		case 1:
			m.SDK = string(r.raw)
		case 2:
			m.Orchestrations = append(m.Orchestrations, string(r.raw))
		case 3:
			m.Activities = append(m.Activities, string(r.raw))
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

// EncodeActivityRequest encodes r.
func EncodeActivityRequest(r *ActivityRequest) []byte {
	var e encoder
	e.string(1, r.Name)
	e.bytes(2, r.Input)
	e.string(3, r.InstanceID)
	e.uint(4, uint64(r.Attempt))
	return e.buf
}

// DecodeActivityRequest decodes an ActivityRequest.
func DecodeActivityRequest(b []byte) (*ActivityRequest, error) {
	req := &ActivityRequest{}
	r := readFields(b, "ActivityRequest")
	for r.next() {
		switch r.field {
		case 1:
			req.Name = string(r.raw)
		case 2:
			req.Input = clone(r.raw)
		case 3:
			req.InstanceID = string(r.raw)
		case 4:
			req.Attempt = uint32(r.v)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return req, nil
}

// EncodeActivityResult encodes r.
func EncodeActivityResult(r *ActivityResult) []byte {
	var e encoder
	e.bytes(1, r.Output)
	if r.Failure != nil {
		e.message(2, func(e *encoder) { encodeFailure(e, r.Failure) })
	}
	return e.buf
}

// DecodeActivityResult decodes an ActivityResult.
func DecodeActivityResult(b []byte) (*ActivityResult, error) {
	res := &ActivityResult{}
	r := readFields(b, "ActivityResult")
	for r.next() {
		switch r.field {
		case 1:
			res.Output = clone(r.raw)
		case 2:
			var err error
			if res.Failure, err = decodeFailure(r.raw); err != nil {
				return nil, err
			}
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return res, nil
}
