package procmem

import "testing"

// TestSettledReadsTheProcess reads the test process's memory: each figure
// is there, and a page shared or not counts at most once in the
// proportional figure.
func TestSettledReadsTheProcess(t *testing.T) {
	t.Parallel()
	m, err := Settled()
	if err != nil {
		t.Fatal(err)
	}
	if m.PSS <= 0 || m.RSS <= 0 || m.Anonymous <= 0 {
		t.Fatalf("read %+v; want every figure above zero", m)
	}
	if m.PSS > m.RSS {
		t.Fatalf("read %+v; the proportional set size cannot exceed the resident one", m)
	}
}
