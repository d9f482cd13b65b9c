package wasmrewrite

import "testing"

// TestImportsYield reads whether a module imports sched_yield, and says
// when its imports do not read (for the compiler to say why).
func TestImportsYield(t *testing.T) {
	t.Parallel()
	const header = "\x00asm\x01\x00\x00\x00"
	const yieldImport = "\x16wasi_snapshot_preview1\x0bsched_yield\x00\x00"
	tests := []struct {
		name          string
		wasm          string
		yields, reads bool
	}{
		{"no imports", header, false, true},
		{"sched_yield", header + "\x01\x05\x01\x60\x00\x01\x7f" + "\x02\x26\x01" + yieldImport, true, true},
		{"another import", header + "\x01\x04\x01\x60\x00\x00" + "\x02\x0c\x01\x03env\x04tick\x00\x00", false, true},
		{"an imported memory", header + "\x02\x0f\x01\x03env\x06memory\x02\x00\x01", false, false},
		{"a truncated section", header + "\x02\x26\x01", false, false},
		{"a truncated header", "\x00asm", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yields, reads := ImportsYield([]byte(tt.wasm))
			if yields != tt.yields || reads != tt.reads {
				t.Errorf("ImportsYield: %v, %v; want %v, %v", yields, reads, tt.yields, tt.reads)
			}
		})
	}
}
