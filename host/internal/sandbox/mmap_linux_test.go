package sandbox

import "testing"

// TestWrittenPages classifies pagemap entries: a page the process wrote is
// its own whether it is in memory or in swap; a page of the file it maps,
// or one it never touched, is not.
func TestWrittenPages(t *testing.T) {
	t.Parallel()
	const present, swapped, file, pfn = 1 << 63, 1 << 62, 1 << 61, 0x1234
	for _, tt := range []struct {
		name  string
		entry uint64
		want  bool
	}{
		{"written, in memory", present | pfn, true},
		{"written, swapped out", swapped | 0x55, true},
		{"the file's page, read", present | file | pfn, false},
		{"never touched", 0, false},
	} {
		if got := written(tt.entry); got != tt.want {
			t.Errorf("%s (entry %#x): written = %v; want %v", tt.name, tt.entry, got, tt.want)
		}
	}
}
