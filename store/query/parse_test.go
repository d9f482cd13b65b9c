package query

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"the issue's example", `customer = "c-42" AND amount > 100`, `(customer = "c-42" AND amount > 100)`},
		{"AND binds tighter than OR", `a = 1 OR b = 2 AND c = 3`, `(a = 1 OR (b = 2 AND c = 3))`},
		{"parentheses", `(a = 1 OR b = 2) AND c = 3`, `((a = 1 OR b = 2) AND c = 3)`},
		{"NOT", `NOT a = 1 and not (b != 'x')`, `(NOT a = 1 AND NOT b != "x")`},
		{"<> is !=", `a <> 1`, `a != 1`},
		{"every comparison", `a < 1 AND a <= -2.5 AND a > 1e6 AND a >= 0`, `(a < 1 AND a <= -2.5 AND a > 1e+06 AND a >= 0)`},
		{"IN", `tags IN ("vip", 'new') OR n NOT IN (1)`, `(tags IN ("vip", "new") OR n NOT IN (1))`},
		{"IS SET and has", `a IS SET AND b is not set AND has(c)`, `(a IS SET AND b IS NOT SET AND c IS SET)`},
		{"booleans", `paid = true AND late != FALSE`, `(paid = TRUE AND late != FALSE)`},
		{"built-ins", `status = "Running" AND created >= "2026-11-27T00:00:00Z" AND id = "o-1" AND name = "Order"`,
			`(status = "Running" AND created >= "2026-11-27T00:00:00Z" AND id = "o-1" AND name = "Order")`},
		{"escapes", `a = "say \"hi\" \\ 'x'"`, `a = "say \"hi\" \\ 'x'"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, err := Parse(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.String(); got != c.want {
				t.Errorf("Parse(%s) = %s, want %s", c.in, got, c.want)
			}
		})
	}
}

func TestParseFields(t *testing.T) {
	t.Parallel()
	e, err := Parse(`status = "Failed" AND customer = "2026-11-27T20:00:00+01:00"`)
	if err != nil {
		t.Fatal(err)
	}
	terms := e.(*And).Terms
	if s := terms[0].(*Compare); !s.Field.Builtin || s.Value.HasTime {
		t.Errorf("status: %+v", s)
	}
	c := terms[1].(*Compare)
	if c.Field.Builtin || !c.Value.HasTime || c.Value.Time.UTC().Hour() != 19 || c.Value.Str != "2026-11-27T20:00:00+01:00" {
		t.Errorf("customer: %+v", c)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"empty", `  `, `query: at 1: the filter is empty; expected a condition such as customer = "c-42"`},
		{"no value", `a = `, `query: at 5: expected a value (a "string", a number, TRUE or FALSE) after a =, found the end`},
		{"an unquoted string", `customer = c42`, `query: at 12: expected a value after customer =, found the name "c42"; quote a string: "c42"`},
		{"no operator", `a 1`, `query: at 3: expected a comparison (= != < <= > >=), IN or IS SET after a, found "1"`},
		{"unclosed parenthesis", `(a = 1 OR b = 2`, `query: at 16: expected AND, OR or ")" to close the "(" at 1, found the end`},
		{"trailing", `a = 1 b = 2`, `query: at 7: expected AND, OR or the end, found "b"`},
		{"a keyword as a field", `AND = 1`, `query: at 1: expected a condition (a field name, NOT, has( or "("), found "AND"`},
		{"unclosed string", `a = "x`, `query: at 5: the string that begins here has no closing "`},
		{"bad escape", `a = "\n"`, `query: at 6: found the escape \n in a string; a string knows \", \' and \\ only`},
		{"bad character", `a = 1 && b = 2`, `query: at 7: found '&', which begins nothing in a filter: a filter is made of names, values, comparisons (= != < <= > >=), AND, OR, NOT, IN, IS SET and parentheses`},
		{"lone !", `a ! 1`, `query: at 3: found "!" alone; write != for "not equal", or NOT before a condition`},
		{"bad number", `a = 0x10`, `query: at 5: "0x10" is not a number; a number is written like 100, -2.5 or 1e6`},
		{"bool ordered", `a > true`, `query: at 5: TRUE and FALSE compare with = and != only, not >`},
		{"bad status", `status = "Done"`, `query: at 10: status is one of [Pending Running Completed Failed Canceled Terminated], not the string "Done"`},
		{"created not a time", `created > "yesterday"`, `query: at 11: created is compared with a time in RFC 3339 form, such as "2026-11-27T20:00:00Z", not the string "yesterday"`},
		{"id a number", `id = 5`, `query: at 6: id is compared with a "string", not "5"`},
		{"IS without SET", `a IS NULL`, `query: at 6: expected SET after IS (name IS SET, name IS NOT SET), found "NULL"`},
		{"built-in IS SET", `status IS SET`, `query: at 1: status is a field every instance has; IS SET and has() ask about search attributes`},
		{"IN without list", `a IN "x"`, `query: at 6: expected "(" after IN, found the string "x"`},
		{"IN unclosed", `a IN ("x" "y")`, `query: at 11: expected "," or ")" in the list after IN, found the string "y"`},
		{"NOT without IN", `a NOT = 1`, `query: at 7: expected IN after a NOT, found "="`},
		{"has without name", `has("a")`, `query: at 5: expected an attribute name in has(…), found the string "a"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(c.in)
			var qe *Error
			if !errors.As(err, &qe) {
				t.Fatalf("Parse(%s) = %v, want a *query.Error", c.in, err)
			}
			if err.Error() != c.want {
				t.Errorf("Parse(%s):\n got %s\nwant %s", c.in, err, c.want)
			}
		})
	}
}

func TestParseLimits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"too long", strings.Repeat(" ", MaxBytes+1), "the filter is 4097 bytes; at most 4096 are allowed"},
		{"too many terms", "a IN (" + strings.Repeat("1, ", MaxTerms) + "1)", "more than 64 comparisons"},
		{"too deep", strings.Repeat("NOT ", MaxDepth+1) + "a = 1", "deeper than 32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := Parse(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`customer = "c-42" AND amount > 100`, `NOT (a IN (1, 2) OR has(b))`, `a = "\"`, `status = "Running"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			return
		}
		// What Parse accepts, it accepts again as it writes it.
		again, err := Parse(e.String())
		if err != nil {
			t.Fatalf("Parse(%q) = %s, which does not parse: %v", s, e, err)
		}
		if again.String() != e.String() {
			t.Fatalf("%s parsed again is %s", e, again)
		}
	})
}
