package wasmlimits

import "fmt"

// constExpr reads a constant expression, up to its end, with the
// instructions the decoder reads in one.
func (r *reader) constExpr() error {
	for {
		op, err := r.byte()
		if err != nil {
			return err
		}
		switch op {
		case 0x0b: // end
			return nil
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // i32 and i64 add, sub, mul
		case 0x41: // i32.const
			_, err = r.leb(5)
		case 0x42: // i64.const
			_, err = r.leb(10)
		case 0x43: // f32.const
			_, err = r.bytes(4)
		case 0x44: // f64.const
			_, err = r.bytes(8)
		case 0x23, 0xd2: // global.get, ref.func
			err = r.u32()
		case 0xd0: // ref.null: a reference type, or a type index
			err = r.refNull()
		case 0xfd: // v128.const
			err = r.v128()
		default:
			return fmt.Errorf("an instruction 0x%02x in a constant expression", op)
		}
		if err != nil {
			return err
		}
	}
}

func (r *reader) refNull() error {
	b, err := r.byte()
	switch {
	case err != nil:
		return err
	case b == 0x70 || b == 0x6f || b == 0x69: // funcref, externref, exnref
		return nil
	}
	r.off--
	return r.u32()
}

func (r *reader) v128() error {
	op, err := r.byte()
	switch {
	case err != nil:
		return err
	case op != 0x0c:
		return fmt.Errorf("a vector instruction 0x%02x in a constant expression", op)
	}
	_, err = r.bytes(16)
	return err
}
