package wasmlimits

import "fmt"

// custom reads a custom section of size bytes: its name, then its
// contents, which the decoder keeps whole (for DWARF) but for the "name"
// section's, which it reads.
func (r *reader) custom(size uint32) error {
	start := r.off
	name, err := r.nameBytes()
	if err != nil {
		return err
	}
	read := uint32(r.off - start)
	if read > size {
		return fmt.Errorf("a custom section of %d bytes, whose name takes %d", size, read)
	}
	if string(name) == "name" {
		return r.names(uint64(size - read))
	}
	_, err = r.bytes(int(size - read))
	return err
}

// names reads the name section's subsections as the decoder does, which
// reads the module name (0), function names (1) and local names (2) past
// the limit its subsection's size sets, and skips any other subsection.
func (r *reader) names(limit uint64) error {
	for limit > 0 {
		if r.done() {
			return nil
		}
		id, _ := r.byte()
		limit--
		start := r.off
		size, err := r.uint()
		if err != nil {
			return err
		}
		limit -= uint64(r.off - start)
		switch id {
		case 0:
			err = r.name()
		case 1:
			err = r.vector("function names", r.nameAssoc)
		case 2:
			err = r.vector("functions with local names", func() error {
				if err := r.u32(); err != nil {
					return err
				}
				return r.vector("local names", r.nameAssoc)
			})
		default:
			_, err = r.bytes(int(size))
		}
		if err != nil {
			return err
		}
		limit -= uint64(size)
	}
	return nil
}

// nameAssoc reads an index and its name.
func (r *reader) nameAssoc() error {
	if err := r.u32(); err != nil {
		return err
	}
	return r.name()
}
