package wasmrewrite

import (
	"bytes"
	"strings"
	"testing"
)

// TestInstrumentBody: the check goes after every loop instruction and
// nowhere else, also where an immediate holds the loop opcode's byte; the
// call to $charge goes before every bulk instruction and no other; and
// instructions that change a table are noticed.
func TestInstrumentBody(t *testing.T) {
	t.Parallel()
	check := string(loopCheck(5, 2))      // the budget is global 5, sched_yield function 2
	const want = "\x23\x05\x45\x04\x40" + // global.get 5, i32.eqz, if
		"\x10\x02\x1a\x41\x80\x80\x01\x24\x05\x0b" + // call 2, drop, i32.const 16384, global.set 5, end
		"\x23\x05\x41\x01\x6b\x24\x05" // global.get 5, i32.const 1, i32.sub, global.set 5
	if check != want {
		t.Fatalf("loopCheck(5, 2) = % x\nwant            % x", check, want)
	}
	call := string(chargeCall(7)) // $charge is function 7
	if call != "\x10\x07" {
		t.Fatalf("chargeCall(7) = % x", call)
	}
	v128 := strings.Repeat("\x03", 16)
	tests := []struct {
		name, body, want string
		unsupported      string
		changesTables    bool
	}{
		{"no loop", "\x00\x41\x03\x1a\x0b", "\x00\x41\x03\x1a\x0b", "", false},
		{"a loop", "\x00\x03\x40\x0c\x00\x0b\x0b", "\x00\x03\x40" + check + "\x0c\x00\x0b\x0b", "", false},
		{"nested loops among immediates",
			"\x01\x02\x7f" + // two i32 locals
				"\x41\x83\x01" + // i32.const 131
				"\x03\x7f" + // loop (result i32)
				"\x42\x03\x1a" + // i64.const 3, drop
				"\xfd\x0c" + v128 + "\x1a" + // v128.const, drop
				"\x28\x03\x03" + // i32.load align 3 offset 3
				"\x0e\x02\x03\x03\x03" + // br_table 3 3 3
				"\x03\x40\x0b" + // loop end
				"\xfc\x0a\x00\x00" + // memory.copy
				"\x44\x03\x03\x03\x03\x03\x03\x03\x03" + // f64.const
				"\x0b\x0b",
			"\x01\x02\x7f\x41\x83\x01\x03\x7f" + check + "\x42\x03\x1a\xfd\x0c" + v128 + "\x1a\x28\x03\x03\x0e\x02\x03\x03\x03\x03\x40" + check +
				"\x0b" + call + "\xfc\x0a\x00\x00\x44\x03\x03\x03\x03\x03\x03\x03\x03\x0b\x0b", "", false},
		{"a loop typed by index", "\x00\x03\x01\x0b\x0b", "\x00\x03\x01" + check + "\x0b\x0b", "", false},
		{"a memory argument with a memory index", "\x00\x28\x42\x01\x03\x03\x40\x0b\x0b", "\x00\x28\x42\x01\x03\x03\x40" + check + "\x0b\x0b", "", false},
		{"table.set", "\x00\x41\x00\xd0\x70\x26\x00\x0b", "\x00\x41\x00\xd0\x70\x26\x00\x0b", "", true},
		{"table.grow", "\x00\xd0\x70\x41\x01\xfc\x0f\x00\x1a\x0b", "\x00\xd0\x70\x41\x01" + call + "\xfc\x0f\x00\x1a\x0b", "", true},
		{"memory.fill in a loop",
			"\x00\x03\x40\x41\x00\x41\x00\x41\x10\xfc\x0b\x00\x0b\x0b",
			"\x00\x03\x40" + check + "\x41\x00\x41\x00\x41\x10" + call + "\xfc\x0b\x00\x0b\x0b", "", false},
		{"table.init, table.copy and table.fill",
			"\x00\x41\x00\x41\x00\x41\x01\xfc\x0c\x00\x00\x41\x00\x41\x00\x41\x01\xfc\x0e\x00\x00\x41\x00\xd0\x70\x41\x01\xfc\x11\x00\x0b",
			"\x00\x41\x00\x41\x00\x41\x01" + call + "\xfc\x0c\x00\x00\x41\x00\x41\x00\x41\x01" + call + "\xfc\x0e\x00\x00\x41\x00\xd0\x70\x41\x01" + call + "\xfc\x11\x00\x0b", "", true},
		{"0xfc instructions of one unit: table.size, a saturating truncation",
			"\x00\xfc\x10\x00\x1a\x43\x00\x00\x00\x00\xfc\x00\x1a\x0b",
			"\x00\xfc\x10\x00\x1a\x43\x00\x00\x00\x00\xfc\x00\x1a\x0b", "", false},
		{"legacy exception handling", "\x00\x06\x40\x0b\x0b", "", "opcode 0x06 at byte 1", false},
		{"an unknown 0xfc instruction", "\x00\xfc\x20\x0b", "", "opcode 0xfc 32", false},
		{"a truncated immediate", "\x00\x41\x80", "", "truncated", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changes, err := instrumentBody(nil, []byte(tt.body), []byte(check), []byte(call), nil, &markSite{placed: true})
			if refused(t, err, tt.unsupported) {
				return
			}
			if !bytes.Equal(got, []byte(tt.want)) {
				t.Fatalf("instrumented:\n% x\nwant:\n% x", got, tt.want)
			}
			if changes != tt.changesTables {
				t.Errorf("changes tables: %v, want %v", changes, tt.changesTables)
			}
		})
	}
}
