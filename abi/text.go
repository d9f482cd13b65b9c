package abi

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// MaxNameBytes bounds a name: of an orchestration, an activity, an event,
// a patch's change id, a child's instance id.
const MaxNameBytes = 256

// MaxReasonBytes bounds the reason given for cancelling or terminating an
// instance.
const MaxReasonBytes = 1024

// quoted is how many bytes of a refused value Quote shows.
const quoted = 64

// The rules, as a refusal states them.
var (
	nameRule   = fmt.Sprintf("a name is 1 to %d bytes of UTF-8 without control characters", MaxNameBytes)
	textRule   = "a text is UTF-8"
	reasonRule = fmt.Sprintf("a reason is at most %d bytes of UTF-8", MaxReasonBytes)
)

// TextError reports a name or a text that breaks its rule (CheckName,
// CheckText, CheckReason). Its message names what it is, shows the value
// (quoted, and cut short), says what is wrong and states the rule, as a
// clause the caller's own error goes on with:
//
//	activity name "Charge\xff" is not valid UTF-8 (at byte 6): a name is …
type TextError struct {
	// What the value is: "activity name", "custom status".
	What  string
	Value string
	// Problem says what is wrong with it: "is empty".
	Problem string
	Rule    string
}

func (e *TextError) Error() string {
	return e.What + " " + Quote(e.Value) + " " + e.Problem + ": " + e.Rule
}

// CheckName returns a *TextError unless name (what it names, such as
// "activity name") is 1 to MaxNameBytes bytes of valid UTF-8 without
// control characters (C0, DEL and C1, NUL among them). Every name a guest
// or a client gives the host must pass: they become metrics labels, log
// fields, JSON and history, which hold them exactly.
func CheckName(what, name string) error {
	fail := func(problem string) error {
		return &TextError{What: what, Value: name, Problem: problem, Rule: nameRule}
	}
	switch {
	case name == "":
		return fail("is empty")
	case len(name) > MaxNameBytes:
		return fail(fmt.Sprintf("is %d bytes", len(name)))
	}
	if problem := utf8Problem(name); problem != "" {
		return fail(problem)
	}
	for i, r := range name {
		if unicode.IsControl(r) {
			return fail(fmt.Sprintf("holds a control character (%U at byte %d)", r, i))
		}
	}
	return nil
}

// CheckText returns a *TextError unless text (what it is, such as "custom
// status") is valid UTF-8: JSON and history hold only that, so other bytes
// would be stored as something else than what was given.
func CheckText(what, text string) error {
	if problem := utf8Problem(text); problem != "" {
		return &TextError{What: what, Value: text, Problem: problem, Rule: textRule}
	}
	return nil
}

// CheckReason returns a *TextError unless reason (what it is, such as
// "cancel reason") is valid UTF-8 of at most MaxReasonBytes bytes.
func CheckReason(what, reason string) error {
	var problem string
	if len(reason) > MaxReasonBytes {
		problem = fmt.Sprintf("is %d bytes", len(reason))
	} else {
		problem = utf8Problem(reason)
	}
	if problem != "" {
		return &TextError{What: what, Value: reason, Problem: problem, Rule: reasonRule}
	}
	return nil
}

// CheckFailure returns a *TextError unless f's message and details are
// valid UTF-8 (CheckText) and its type, if any, is a name (CheckName).
func CheckFailure(f *Failure) error {
	if err := CheckText("failure message", f.Message); err != nil {
		return err
	}
	if f.Type != "" {
		if err := CheckName("failure type", f.Type); err != nil {
			return err
		}
	}
	return CheckText("failure details", f.Details)
}

// utf8Problem says where s is not valid UTF-8, or returns "".
func utf8Problem(s string) string {
	if utf8.ValidString(s) {
		return ""
	}
	i := 0
	for {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return fmt.Sprintf("is not valid UTF-8 (at byte %d)", i)
		}
		i += size
	}
}

// Quote quotes s for a message, as strconv.Quote does, showing at most its
// first 64 bytes, followed by "…" when there are more: a message never
// echoes more than that of what it refuses.
func Quote(s string) string {
	if len(s) <= quoted {
		return strconv.Quote(s)
	}
	cut := quoted
	for cut > quoted-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}
