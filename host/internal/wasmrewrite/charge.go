package wasmrewrite

// A bulk instruction does as much as its length operand says, at once:
// memory.copy and memory.fill move that many bytes; table.copy,
// table.fill, table.init and table.grow write that many table entries.
// One such instruction in a loop of a few iterations could run for hours,
// and the step budget, which counts iterations, would see none of it. So
// the rewrite adds a function of its own, $charge, and calls it just
// before every bulk instruction: the length is on top of the stack there,
// $charge takes it, charges the yield budget one iteration per 1 <<
// ChargeShift of it, yields once for every YieldEvery iterations that
// takes, and gives the length back, so the instruction runs on the
// operands it had:
//
//	(func $charge (param $n i32) (result i32)
//	  global.get $budget
//	  local.get $n
//	  i32.const ChargeShift
//	  i32.shr_u
//	  i32.sub
//	  global.set $budget
//	  block
//	    loop                 ;; until the budget is not negative
//	      global.get $budget
//	      i32.const 0
//	      i32.ge_s
//	      br_if 1
//	      call $sched_yield
//	      drop
//	      global.get $budget
//	      i32.const YieldEvery
//	      i32.add
//	      global.set $budget
//	      br 0
//	    end
//	  end
//	  local.get $n)
//
// The budget is never negative where $charge begins (the loop check leaves
// it between 0 and YieldEvery), and a length of at most 2^32 - 1 charges at
// most 2^(32 - ChargeShift) iterations, so the subtraction cannot wrap.
// The charge is taken before the instruction runs, from its operand alone,
// so a step that runs past its budget stops at the same point on every
// run and every runtime. Appending a function moves no index, so nothing
// else in the module changes. memory.grow is not charged: memory never
// shrinks, so all the growing an instance ever does is bounded by its
// memory limit, and a grow past the limit fails at once. memory.init is
// not there to charge: the rewrite refuses it (code.go).

// ChargeShift sets what a bulk instruction costs: one loop iteration for
// every 1 << ChargeShift bytes or table entries. A copy of 16 bytes takes
// about as long as a loop iteration of Go code.
const ChargeShift = 4

// chargeType is the encoding of $charge's type, (i32) -> (i32).
const chargeType = "\x60\x01\x7f\x01\x7f"

// chargeBody returns $charge's body, with its size before it, for the
// budget at global index budget and sched_yield at function index yield.
func chargeBody(budget, yield uint32) []byte {
	b := []byte{0x00}                                        // no locals
	b = appendU32(append(b, 0x23), budget)                   // global.get
	b = append(b, 0x20, 0x00, 0x41, ChargeShift, 0x76, 0x6b) // local.get 0, i32.const, i32.shr_u, i32.sub
	b = appendU32(append(b, 0x24), budget)                   // global.set
	b = append(b, 0x02, 0x40, 0x03, 0x40)                    // block, loop
	b = appendU32(append(b, 0x23), budget)                   // global.get
	b = append(b, 0x41, 0x00, 0x4e, 0x0d, 0x01)              // i32.const 0, i32.ge_s, br_if 1
	b = appendU32(append(b, 0x10), yield)                    // call
	b = append(b, 0x1a)                                      // drop
	b = appendU32(append(b, 0x23), budget)                   // global.get
	b = appendS32(append(b, 0x41), YieldEvery)               // i32.const
	b = append(b, 0x6a)                                      // i32.add
	b = appendU32(append(b, 0x24), budget)                   // global.set
	b = append(b, 0x0c, 0x00, 0x0b, 0x0b, 0x20, 0x00, 0x0b)  // br 0, end, end, local.get 0, end
	return append(appendU32(nil, uint32(len(b))), b...)
}

// chargeCall returns the call to $charge, at function index charge, that
// goes before every bulk instruction.
func chargeCall(charge uint32) []byte { return appendU32([]byte{0x10}, charge) }

// charged reports, at the sub-opcode of a 0xfc instruction, whether the
// instruction is one $charge is called before: memory.copy, memory.fill,
// table.init, table.copy, table.grow or table.fill. It reads nothing.
func (r *reader) charged() bool {
	peek := *r
	sub, err := peek.u32()
	return err == nil && (sub >= 10 && sub <= 12 || sub == 14 || sub == 15 || sub == 17)
}
