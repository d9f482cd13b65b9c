package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// durabox's numeric flags refuse any value outside their range as they
// are parsed, naming the value, the flag and the range (the flag package
// writes: invalid value "0" for flag --execution: it must be …), so that a
// bad number never silently means the default.

// whole is a type a whole-number flag stores into.
type whole interface{ ~int | ~int64 | ~uint64 }

// span is the values a whole-number flag takes: from min to max
// (math.MaxInt64 for no bound), and 0 too when orZero.
type span struct {
	min, max int64
	orZero   bool
	// note, when set, follows the range in parentheses: what 0 means, or
	// why the range is what it is.
	note string
}

// wholeFlag is a whole-number flag that takes the values of its span.
type wholeFlag[T whole] struct {
	p *T
	span
}

// wholeVar defines a whole-number flag that takes the values of s,
// storing into p, whose value stays value unless it is set.
func wholeVar[T whole](fs *flag.FlagSet, p *T, name string, value T, s span, usage string) {
	*p = value
	fs.Var(&wholeFlag[T]{p: p, span: s}, name, usage)
}

func (f *wholeFlag[T]) String() string {
	if f == nil || f.p == nil {
		return "0"
	}
	return fmt.Sprint(*f.p)
}

func (f *wholeFlag[T]) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || (n < f.min || n > f.max) && !(n == 0 && f.orZero) {
		return errors.New(f.text(errors.Is(err, strconv.ErrRange)))
	}
	*f.p = T(n)
	return nil
}

// text says which values the span takes; past int64 (tooLarge), with its
// upper bound even when it has none.
func (s span) text(tooLarge bool) string {
	text := fmt.Sprintf("it must be a whole number, %d or more", s.min)
	if s.max != math.MaxInt64 || tooLarge {
		text = fmt.Sprintf("it must be a whole number from %d to %d", s.min, s.max)
	}
	if s.orZero {
		text = strings.Replace(text, "a whole number", "0 or a whole number", 1)
	}
	return withNote(text, s.note)
}

// durationFlag is a duration flag that takes 0 or more.
type durationFlag struct {
	p    *time.Duration
	note string
}

// durationVar defines a duration flag, 0 or more, storing into p.
func durationVar(fs *flag.FlagSet, p *time.Duration, name, note, usage string) {
	fs.Var(&durationFlag{p: p, note: note}, name, usage)
}

func (f *durationFlag) String() string {
	if f == nil || f.p == nil {
		return "0s"
	}
	return f.p.String()
}

func (f *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return errors.New(withNote("it must be a duration of 0 or more, such as 30s, 5m or 1h30m", f.note))
	}
	*f.p = d
	return nil
}

func withNote(text, note string) string {
	if note == "" {
		return text
	}
	return text + " (" + note + ")"
}

// executionVar defines --execution, an execution's number, which
// history and replay take: unset (0) means the current execution.
func executionVar(fs *flag.FlagSet, p *int64, usage string) {
	wholeVar(fs, p, "execution", 0, span{min: 1, max: math.MaxInt64, note: "1 is the first execution; leave --execution out for the current one"}, usage)
}
