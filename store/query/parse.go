package query

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/durabox/durabox/engine"
)

// Limits of a filter, so that the SQL a store makes of one stays small.
const (
	// MaxBytes is the longest filter text.
	MaxBytes = 4096
	// MaxTerms is the most comparisons (each value of an IN counted) in
	// one filter.
	MaxTerms = 64
	// MaxDepth is the deepest nesting of NOT and parentheses.
	MaxDepth = 32
)

// Error is a filter's syntax or meaning error, at byte offset Pos of the
// text (0 is its first byte).
type Error struct {
	Pos int
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("query: at %d: %s", e.Pos+1, e.Msg) }

func errorAt(pos int, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// keywords are the words a field may not be, in upper case.
var keywords = []string{"AND", "OR", "NOT", "IN", "IS", "SET", "TRUE", "FALSE"}

// IsKeyword reports whether name is a keyword of the language (in any
// case), which no search attribute may be named.
func IsKeyword(name string) bool { return slices.Contains(keywords, strings.ToUpper(name)) }

// Parse parses a filter. Its errors are *Error, naming the position (from
// 1) and what was expected there.
func Parse(text string) (Expr, error) {
	if len(text) > MaxBytes {
		return nil, errorAt(MaxBytes, "the filter is %d bytes; at most %d are allowed", len(text), MaxBytes)
	}
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	if p.peek().kind == tEOF {
		return nil, errorAt(0, "the filter is empty; expected a condition such as customer = \"c-42\"")
	}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, errorAt(t.pos, "expected AND, OR or the end, found %s", t.describe())
	}
	return e, nil
}

type parser struct {
	toks  []token
	i     int
	terms int
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

// keyword reports whether the next token is the keyword kw, and takes it
// if so.
func (p *parser) keyword(kw string) bool {
	if t := p.peek(); t.kind == tIdent && strings.EqualFold(t.text, kw) {
		p.i++
		return true
	}
	return false
}

func (p *parser) or() (Expr, error) {
	return p.list(p.and, "OR", func(terms []Expr) Expr { return &Or{Terms: terms} })
}

func (p *parser) and() (Expr, error) {
	return p.list(p.unary, "AND", func(terms []Expr) Expr { return &And{Terms: terms} })
}

// list parses one or more of sub separated by the keyword sep.
func (p *parser) list(sub func() (Expr, error), sep string, build func([]Expr) Expr) (Expr, error) {
	first, err := sub()
	if err != nil {
		return nil, err
	}
	terms := []Expr{first}
	for p.keyword(sep) {
		e, err := sub()
		if err != nil {
			return nil, err
		}
		terms = append(terms, e)
	}
	if len(terms) == 1 {
		return first, nil
	}
	return build(terms), nil
}

func (p *parser) unary() (Expr, error) {
	t := p.peek()
	if p.depth++; p.depth > MaxDepth {
		return nil, errorAt(t.pos, "the filter nests NOT and parentheses deeper than %d", MaxDepth)
	}
	defer func() { p.depth-- }()
	if p.keyword("NOT") {
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &Not{X: x}, nil
	}
	if t.kind == tLParen {
		p.i++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tRParen {
			return nil, errorAt(c.pos, "expected AND, OR or \")\" to close the \"(\" at %d, found %s", t.pos+1, c.describe())
		}
		return e, nil
	}
	return p.term()
}

func (p *parser) term() (Expr, error) {
	t := p.next()
	if t.kind != tIdent || IsKeyword(t.text) {
		return nil, errorAt(t.pos, "expected a condition (a field name, NOT, has( or \"(\"), found %s", t.describe())
	}
	if strings.EqualFold(t.text, "has") && p.peek().kind == tLParen {
		p.i++
		f := p.next()
		if f.kind != tIdent || IsKeyword(f.text) {
			return nil, errorAt(f.pos, "expected an attribute name in has(…), found %s", f.describe())
		}
		if c := p.next(); c.kind != tRParen {
			return nil, errorAt(c.pos, "expected \")\" after has(%s, found %s", f.text, c.describe())
		}
		return p.isSet(f, false)
	}
	switch {
	case p.keyword("IS"):
		not := p.keyword("NOT")
		if !p.keyword("SET") {
			n := p.peek()
			return nil, errorAt(n.pos, "expected SET after IS (name IS SET, name IS NOT SET), found %s", n.describe())
		}
		return p.isSet(t, not)
	case p.keyword("IN"):
		return p.in(t, false)
	case p.keyword("NOT"):
		if !p.keyword("IN") {
			n := p.peek()
			return nil, errorAt(n.pos, "expected IN after %s NOT, found %s", t.text, n.describe())
		}
		return p.in(t, true)
	}
	op := p.next()
	if op.kind != tOp {
		return nil, errorAt(op.pos, "expected a comparison (= != < <= > >=), IN or IS SET after %s, found %s", t.text, op.describe())
	}
	f := field(t.text)
	v, err := p.value(f, op.text)
	if err != nil {
		return nil, err
	}
	if err := p.count(t.pos, 1); err != nil {
		return nil, err
	}
	return &Compare{Field: f, Op: op.text, Value: v}, nil
}

func field(name string) Field { return Field{Name: name, Builtin: slices.Contains(Builtins, name)} }

func (p *parser) count(pos, n int) error {
	if p.terms += n; p.terms > MaxTerms {
		return errorAt(pos, "the filter has more than %d comparisons", MaxTerms)
	}
	return nil
}

func (p *parser) isSet(t token, not bool) (Expr, error) {
	f := field(t.text)
	if f.Builtin {
		return nil, errorAt(t.pos, "%s is a field every instance has; IS SET and has() ask about search attributes", t.text)
	}
	if err := p.count(t.pos, 1); err != nil {
		return nil, err
	}
	return &IsSet{Field: f, Not: not}, nil
}

func (p *parser) in(t token, not bool) (Expr, error) {
	f := field(t.text)
	if o := p.next(); o.kind != tLParen {
		return nil, errorAt(o.pos, "expected \"(\" after IN, found %s", o.describe())
	}
	in := &In{Field: f, Not: not}
	for {
		v, err := p.value(f, "=")
		if err != nil {
			return nil, err
		}
		in.Values = append(in.Values, v)
		if err := p.count(t.pos, 1); err != nil {
			return nil, err
		}
		switch c := p.next(); c.kind {
		case tComma:
			continue
		case tRParen:
			return in, nil
		default:
			return nil, errorAt(c.pos, "expected \",\" or \")\" in the list after IN, found %s", c.describe())
		}
	}
}

// value parses the literal compared with f by op, and checks that they
// go together.
func (p *parser) value(f Field, op string) (Value, error) {
	t := p.next()
	var v Value
	switch {
	case t.kind == tString:
		v = Value{Kind: String, Str: t.text}
		if tm, err := time.Parse(time.RFC3339Nano, t.text); err == nil {
			v.Time, v.HasTime = tm, true
		}
	case t.kind == tNumber:
		n, err := strconv.ParseFloat(t.text, 64)
		if err != nil || strings.ContainsAny(t.text, "xXpP_") || strings.EqualFold(t.text, "-inf") {
			return v, errorAt(t.pos, "%s is not a number; a number is written like 100, -2.5 or 1e6", quote(t.text))
		}
		v = Value{Kind: Number, Num: n}
	case t.kind == tIdent && (strings.EqualFold(t.text, "TRUE") || strings.EqualFold(t.text, "FALSE")):
		v = Value{Kind: Bool, Bool: strings.EqualFold(t.text, "TRUE")}
	case t.kind == tIdent:
		return v, errorAt(t.pos, "expected a value after %s %s, found the name %s; quote a string: \"%s\"", f.Name, op, quote(t.text), t.text)
	default:
		return v, errorAt(t.pos, "expected a value (a \"string\", a number, TRUE or FALSE) after %s %s, found %s", f.Name, op, t.describe())
	}
	if v.Kind == Bool && op != "=" && op != "!=" {
		return v, errorAt(t.pos, "TRUE and FALSE compare with = and != only, not %s", op)
	}
	if !f.Builtin {
		return v, nil
	}
	switch f.Name {
	case "status":
		if v.Kind != String || !slices.Contains(engine.Statuses(), engine.Status(v.Str)) {
			return v, errorAt(t.pos, "status is one of %v, not %s", engine.Statuses(), t.describe())
		}
	case "created", "updated":
		if !v.HasTime {
			return v, errorAt(t.pos, "%s is compared with a time in RFC 3339 form, such as \"2026-11-27T20:00:00Z\", not %s", f.Name, t.describe())
		}
	default: // id, name
		if v.Kind != String {
			return v, errorAt(t.pos, "%s is compared with a \"string\", not %s", f.Name, t.describe())
		}
	}
	return v, nil
}
