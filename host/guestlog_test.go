package host

import (
	"fmt"
	"reflect"
	"testing"
)

// TestLineSplitterCutsLongLines splits streams written in several parts:
// lines end at newlines or where the stream is flushed (the end of a step,
// written flush here), and a line longer than the limit is handed on cut
// at it, the rest of it skipped up to its newline or the flush.
func TestLineSplitterCutsLongLines(t *testing.T) {
	t.Parallel()
	const flush = "<flush>"
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"lines", []string{"ab\ncd\n"}, []string{"ab", "cd"}},
		{"a line in parts", []string{"a", "b", "c\nd"}, []string{"abc"}},
		{"empty lines", []string{"\n\n"}, []string{"", ""}},
		{"exactly the limit", []string{"abcd\n"}, []string{"abcd"}},
		{"cut in one write", []string{"abcdef\ngh\n"}, []string{"abcd (cut)", "gh"}},
		{"cut across writes", []string{"ab", "cdef", "gh", "ij\nk\n"}, []string{"abcd (cut)", "k"}},
		{"cut and never ended", []string{"abcde", "fgh", "ijk"}, []string{"abcd (cut)"}},
		{"flushed", []string{"ab", flush, "cd\n"}, []string{"ab", "cd"}},
		{"flushed after a cut", []string{"abcdef", flush, "gh\n"}, []string{"abcd (cut)", "gh"}},
		{"flushed with nothing", []string{flush, "ab\n", flush}, []string{"ab"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := lineSplitter{max: 4}
			var got []string
			line := func(b []byte, cut bool) {
				if cut {
					got = append(got, fmt.Sprintf("%s (cut)", b))
				} else {
					got = append(got, string(b))
				}
			}
			for _, w := range tt.writes {
				if w == flush {
					s.flush(line)
				} else {
					s.write([]byte(w), line)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if cap(s.partial) > 8 {
				t.Errorf("the splitter holds %d bytes; its limit is 4", cap(s.partial))
			}
		})
	}
}
