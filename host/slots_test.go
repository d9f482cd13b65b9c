package host

import (
	"testing"
	"time"

	"github.com/durabox/durabox/store"
)

// TestSlots: a cron expression's slots are read in its time zone (across
// a change of daylight saving time), an interval's are its multiples since
// the epoch, whenever they are asked for.
func TestSlots(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name, cron, every, zone string
		after                   time.Time
		want                    []string
	}{
		{"cron in UTC", "*/5 * * * *", "", "", at("2026-11-27T17:03:10Z"), []string{"2026-11-27T17:05:00Z", "2026-11-27T17:10:00Z"}},
		{"cron in Paris, over summer time's end", "0 3 * * *", "", "Europe/Paris", at("2026-10-24T12:00:00Z"),
			[]string{"2026-10-25T02:00:00Z", "2026-10-26T02:00:00Z"}},
		{"descriptor", "@hourly", "", "", at("2026-11-27T17:03:10Z"), []string{"2026-11-27T18:00:00Z", "2026-11-27T19:00:00Z"}},
		{"interval", "", "10m", "", at("2026-11-27T17:03:10Z"), []string{"2026-11-27T17:10:00Z", "2026-11-27T17:20:00Z"}},
		{"interval from a slot", "", "7s", "", at("1970-01-01T00:00:14Z"), []string{"1970-01-01T00:00:21Z", "1970-01-01T00:00:28Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			every, _ := time.ParseDuration(tt.every)
			sl, err := newSlots(tt.cron, every, tt.zone)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for s := sl.next(tt.after); len(got) < len(tt.want); s = sl.next(s) {
				got = append(got, s.Format(time.RFC3339))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("slots after %v: %v; want %v", tt.after, got, tt.want)
				}
			}
		})
	}
}

// TestJitter: a slot's jitter is below the maximum, the same every time it
// is computed, and differs between slots and between schedules.
func TestJitter(t *testing.T) {
	t.Parallel()
	slot := time.Date(2026, 11, 27, 17, 5, 0, 0, time.UTC)
	seen := map[time.Duration]bool{}
	for i := range 100 {
		s := slot.Add(time.Duration(i) * time.Minute)
		j := jitter("nightly", s, 30*time.Second)
		if j < 0 || j >= 30*time.Second || j != jitter("nightly", s, 30*time.Second) {
			t.Fatalf("jitter of slot %v: %v, then %v; want the same, in [0, 30s)", s, j, jitter("nightly", s, 30*time.Second))
		}
		seen[j] = true
	}
	if len(seen) < 90 {
		t.Fatalf("100 slots had %d jitters; want them spread", len(seen))
	}
	if jitter("nightly", slot, time.Minute) == jitter("hourly", slot, time.Minute) || jitter("x", slot, 0) != 0 {
		t.Fatal("two schedules' jitters agree, or no jitter is not 0")
	}
	sc := scheduleOf(store.Schedule{Name: "nightly", Every: time.Minute, Jitter: 30 * time.Second, NextSlot: slot}, nil)
	if len(sc.NextRuns) != nextRuns {
		t.Fatalf("next runs %v; want %d", sc.NextRuns, nextRuns)
	}
	for i, r := range sc.NextRuns {
		s := slot.Add(time.Duration(i) * time.Minute)
		if want := s.Add(jitter("nightly", s, 30*time.Second)); !r.Equal(want) {
			t.Fatalf("next run %d: %v; want the slot %v with its jitter, %v", i, r, s, want)
		}
	}
}
