package host

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

// slots are the times a schedule names: those of a cron expression, read
// in a time zone, or the multiples of an interval since the Unix epoch.
// Either way they are a function of the schedule alone, so every host
// computes the same ones (RATIONALE.md, "Why robfig/cron?").
type slots struct {
	cron  cron.Schedule
	loc   *time.Location
	every time.Duration
}

// cronParser reads five fields and the descriptors (@daily, …).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// newSlots reads the slots of a schedule: its Cron in its Timezone, or
// its Every. Its errors say what was wrong and what would do.
func newSlots(expr string, every time.Duration, timezone string) (slots, error) {
	switch {
	case expr == "" && every == 0:
		return slots{}, fmt.Errorf("a schedule needs a cron expression (--cron '*/5 * * * *') or an interval (--every 10m)")
	case expr != "" && every != 0:
		return slots{}, fmt.Errorf("a schedule takes a cron expression or an interval, not both")
	case every != 0 && timezone != "":
		return slots{}, fmt.Errorf("an interval's slots are the same in every time zone: a time zone goes with a cron expression")
	case every != 0 && (every < time.Second || every%time.Second != 0):
		return slots{}, fmt.Errorf("the interval is %s; it must be whole seconds, at least 1s", every)
	case every != 0:
		return slots{every: every, loc: time.UTC}, nil
	}
	loc := time.UTC
	if timezone != "" {
		var err error
		if loc, err = time.LoadLocation(timezone); err != nil || timezone == "Local" {
			return slots{}, fmt.Errorf("the time zone %s is not one this host knows: name one of the IANA database, such as Europe/Paris or America/New_York", abi.Quote(timezone))
		}
	}
	switch {
	case strings.HasPrefix(expr, "@every"):
		return slots{}, fmt.Errorf("the cron expression %s counts from whenever it is read: for a fixed interval use --every (every in the API)", abi.Quote(expr))
	case strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ="):
		return slots{}, fmt.Errorf("the cron expression %s names its time zone: give it with --timezone (timezone in the API) instead", abi.Quote(expr))
	}
	c, err := cronParser.Parse(expr)
	if err != nil {
		return slots{}, fmt.Errorf("the cron expression %s does not parse (%v); it has five fields, minute hour day-of-month month day-of-week, as in '*/5 * * * *' or '0 3 * * MON-FRI', or is a descriptor such as @hourly or @daily", abi.Quote(expr), err)
	}
	return slots{cron: c, loc: loc}, nil
}

// slotsOf reads the slots of a stored schedule.
func slotsOf(sc store.Schedule) (slots, error) { return newSlots(sc.Cron, sc.Every, sc.Timezone) }

// next returns the first slot after t, in UTC; zero when there is none
// within five years (a cron expression of a day no month has).
func (s slots) next(t time.Time) time.Time {
	if s.every != 0 {
		n := t.UnixNano() / int64(s.every)
		if t.UnixNano() < 0 && t.UnixNano()%int64(s.every) != 0 {
			n--
		}
		return time.Unix(0, (n+1)*int64(s.every)).UTC()
	}
	return s.cron.Next(t.In(s.loc)).UTC()
}

// jitter is the delay of slot's start in the schedule name: up to max,
// a function of the name and the slot alone, so that every host agrees.
func jitter(name string, slot time.Time, max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(slot.UnixNano())))
	return time.Duration(h.Sum64() % uint64(max))
}

// runID is the instance id of a schedule's run of slot.
func runID(name string, slot time.Time) string {
	return name + ":" + slot.UTC().Format(time.RFC3339Nano)
}

// checkScheduleName refuses a name that is not 1 to 64 letters, digits,
// '.', '_' or '-', starting with a letter or digit: a name and ':' begin
// each run's instance id.
func checkScheduleName(name string) error {
	ok := len(name) >= 1 && len(name) <= 64
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		ok = alnum || i > 0 && (c == '.' || c == '_' || c == '-')
	}
	if !ok {
		return fmt.Errorf("%w: the schedule name %s must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", api.ErrBadInput, abi.Quote(name))
	}
	return nil
}

// parseDuration reads a duration of a schedule (what names it, for the
// error), which may not be negative; empty is zero.
func parseDuration(what, v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: the %s %s is not a duration such as 30s, 10m or 1h30m", api.ErrBadInput, what, abi.Quote(v))
	}
	return d, nil
}
