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
// message is encoded in place, then moved up past its length, so that no
// second buffer is allocated.
func (e *encoder) message(field uint64, encode func(*encoder)) {
	e.key(field, wireBytes)
	start := len(e.buf)
	encode(e)
	var length [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(length[:], uint64(len(e.buf)-start))
	e.buf = append(e.buf, length[:n]...)
	copy(e.buf[start+n:], e.buf[start:len(e.buf)-n])
	copy(e.buf[start:], length[:n])
}

// decodeFields walks the fields of one message, calling visit for each. For
// varint fields raw is nil; for byte fields v is the length and raw the bytes.
func decodeFields(b []byte, what string, visit func(field uint64, v uint64, raw []byte) error) error {
	if len(b) > maxMessage {
		return fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", ErrMalformed, what, len(b), maxMessage)
	}
	for len(b) > 0 {
		k, n := binary.Uvarint(b)
		if n <= 0 {
			return fmt.Errorf("%w: %s: bad field key", ErrMalformed, what)
		}
		b = b[n:]
		field, wire := k>>1, k&1
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return fmt.Errorf("%w: %s: field %d: bad value", ErrMalformed, what, field)
		}
		b = b[n:]
		var raw []byte
		if wire == wireBytes {
			if v > uint64(len(b)) {
				return fmt.Errorf("%w: %s: field %d: length %d runs past the end", ErrMalformed, what, field, v)
			}
			raw, b = b[:v:v], b[v:]
		}
		if err := visit(field, v, raw); err != nil {
			return err
		}
	}
	return nil
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
	err := decodeFields(b, "Failure", func(field, _ uint64, raw []byte) error {
		switch field {
		case 1:
			f.Message = string(raw)
		case 2:
			f.Details = string(raw)
		}
		return nil
	})
	return f, err
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
	err := decodeFields(b, "Activation", func(field, v uint64, raw []byte) error {
		switch field {
		case 1:
			a.Time = unzigzag(v)
		case 2:
			a.Replaying = v != 0
		case 3:
			j, err := decodeJob(raw)
			if err != nil {
				return err
			}
			a.Jobs = append(a.Jobs, j)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

func decodeJob(b []byte) (Job, error) {
	var j Job
	err := decodeFields(b, "Job", func(field, v uint64, raw []byte) error {
		var err error
		switch field {
		case 1:
			j.Kind = JobKind(v)
		case 2:
			j.Seq = v
		case 3:
			j.Name = string(raw)
		case 4:
			j.InstanceID = string(raw)
		case 5:
			j.Input = clone(raw)
		case 6:
			j.Result = clone(raw)
		case 7:
			j.Failure, err = decodeFailure(raw)
		}
		return err
	})
	return j, err
}

// EncodeActivationResult encodes r.
func EncodeActivationResult(r *ActivationResult) []byte {
	e := encoder{buf: make([]byte, 0, hotSize)}
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
	r := &ActivationResult{}
	err := decodeFields(b, "ActivationResult", func(field, _ uint64, raw []byte) error {
		if field != 1 {
			return nil
		}
		c, err := decodeCommand(raw)
		if err != nil {
			return err
		}
		r.Commands = append(r.Commands, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func decodeCommand(b []byte) (Command, error) {
	var c Command
	err := decodeFields(b, "Command", func(field, v uint64, raw []byte) error {
		var err error
		switch field {
		case 1:
			c.Kind = CommandKind(v)
		case 2:
			c.Seq = v
		case 3:
			c.Name = string(raw)
		case 4:
			c.Input = clone(raw)
		case 5:
			c.Delay = unzigzag(v)
		case 6:
			c.Output = clone(raw)
		case 7:
			c.Failure, err = decodeFailure(raw)
		case 8:
			c.Target = v
		case 9:
			c.InstanceID = string(raw)
		case 10:
			c.Detached = v != 0
		case 11:
			c.TimeoutMillis = v
		}
		return err
	})
	return c, err
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
	err := decodeFields(b, "Manifest", func(field, _ uint64, raw []byte) error {
		switch field {
		case 1:
			m.SDK = string(raw)
		case 2:
			m.Orchestrations = append(m.Orchestrations, string(raw))
		case 3:
			m.Activities = append(m.Activities, string(raw))
		}
		return nil
	})
	if err != nil {
		return nil, err
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
	r := &ActivityRequest{}
	err := decodeFields(b, "ActivityRequest", func(field, v uint64, raw []byte) error {
		switch field {
		case 1:
			r.Name = string(raw)
		case 2:
			r.Input = clone(raw)
		case 3:
			r.InstanceID = string(raw)
		case 4:
			r.Attempt = uint32(v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
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
	r := &ActivityResult{}
	err := decodeFields(b, "ActivityResult", func(field, _ uint64, raw []byte) error {
		var err error
		switch field {
		case 1:
			r.Output = clone(raw)
		case 2:
			r.Failure, err = decodeFailure(raw)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}
