package wasmlimits

import (
	"errors"
	"fmt"
)

// reader reads a module as the decoder does: from a position in the whole
// module, whatever section it is in.
type reader struct {
	b   []byte
	off int
}

var errTruncated = errors.New("the module ends early")

func (r *reader) done() bool { return r.off >= len(r.b) }

// left is how many bytes of the module are left.
func (r *reader) left() int { return len(r.b) - r.off }

func (r *reader) byte() (byte, error) {
	if r.done() {
		return 0, errTruncated
	}
	r.off++
	return r.b[r.off-1], nil
}

func (r *reader) bytes(n int) ([]byte, error) {
	if n > r.left() {
		return nil, errTruncated
	}
	r.off += n
	return r.b[r.off-n : r.off], nil
}

// leb reads a LEB128 number of at most max bytes, signed or not, and
// returns its low 32 bits read as unsigned.
func (r *reader) leb(max int) (uint32, error) {
	var v uint32
	for i := range max {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint32(b&0x7f) << min(7*i, 31)
		if b&0x80 == 0 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("a number runs past %d bytes", max)
}

func (r *reader) uint() (uint32, error) { return r.leb(5) }

// u32 reads an index, or any u32 whose value does not matter here.
func (r *reader) u32() error {
	_, err := r.uint()
	return err
}

// size reads a u32 that counts what follows, bytes or items of a byte at
// least, and refuses one larger than the bytes left.
func (r *reader) size(what string) (uint32, error) {
	n, err := r.uint()
	if err != nil {
		return 0, err
	}
	if int64(n) > int64(r.left()) {
		return 0, fmt.Errorf("it declares %d %s, with %d bytes left to hold them", n, what, r.left())
	}
	return n, nil
}

// vector reads a count of items, and each item with item.
func (r *reader) vector(what string, item func() error) error {
	n, err := r.size(what)
	if err != nil {
		return err
	}
	for i := range n {
		if err := item(); err != nil {
			return fmt.Errorf("%s %d: %w", what, i, err)
		}
	}
	return nil
}

// name reads a name (a vector of bytes).
func (r *reader) name() error {
	_, err := r.nameBytes()
	return err
}

func (r *reader) nameBytes() ([]byte, error) {
	n, err := r.size("bytes of a name")
	if err != nil {
		return nil, err
	}
	return r.bytes(int(n))
}
