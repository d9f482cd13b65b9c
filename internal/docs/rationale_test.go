package docs

import (
	"regexp"
	"strings"
	"testing"

	"github.com/durabox/durabox/internal/guestbuild"
)

// TestRationaleIsGroupedByTopic: every "Why …?" entry of RATIONALE.md is
// an entry of a topic ("### Why …?" under a "## " topic), and its
// contents list links to every topic and every entry.
func TestRationaleIsGroupedByTopic(t *testing.T) {
	t.Parallel()
	d, err := Read(guestbuild.Root(), "RATIONALE.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, l := range d.Links {
		listed[l.Text] = true
	}
	heading := regexp.MustCompile(`(?m)^(#{2,3}) (.*)$`)
	seen := map[string]int{}
	topics := 0
	for _, m := range heading.FindAllStringSubmatch(string(d.Source), -1) {
		level, title := m[1], m[2]
		a := "#" + anchor(strings.ReplaceAll(title, "`", ""), seen)
		if title == "Contents" {
			continue
		}
		if level == "##" && strings.HasPrefix(title, "Why") {
			t.Errorf("RATIONALE.md: %q is not under a topic: make it a ### entry of one, and list it in the contents", title)
			continue
		}
		if level == "##" {
			topics++
		}
		if !listed[a] {
			t.Errorf("RATIONALE.md's contents do not list %q", title)
		}
	}
	if topics < 5 {
		t.Errorf("RATIONALE.md has %d topics; its entries are to be grouped by topic", topics)
	}
}
