package query

import (
	"strconv"
	"strings"
	"time"
)

// Expr is a parsed filter: an *And, *Or, *Not, *Compare, *In or *IsSet.
type Expr interface {
	// String writes the expression back in the language, fully
	// parenthesized.
	String() string
	expr()
}

// And holds when every one of Terms holds.
type And struct{ Terms []Expr }

// Or holds when one of Terms holds.
type Or struct{ Terms []Expr }

// Not holds when X does not.
type Not struct{ X Expr }

// Field is what a comparison reads: a built-in column of the instance or
// a search attribute.
type Field struct {
	Name string
	// Builtin is set for status, name, id, created and updated.
	Builtin bool
}

// Builtins are the fields every instance has, which no search attribute
// may be named.
var Builtins = []string{"status", "name", "id", "created", "updated"}

// Compare compares Field with Value by Op (=, !=, <, <=, >, >=).
type Compare struct {
	Field Field
	Op    string
	Value Value
}

// In holds when Field equals one of Values (or, if Not, none of them
// while the field is set).
type In struct {
	Field  Field
	Values []Value
	Not    bool
}

// IsSet holds when the instance has the attribute Field (or, if Not, does
// not have it).
type IsSet struct {
	Field Field
	Not   bool
}

// Kind is the kind of a literal.
type Kind uint8

// The kinds of literal.
const (
	String Kind = iota + 1
	Number
	Bool
)

// Value is a literal.
type Value struct {
	Kind Kind
	// Str is a String's text.
	Str string
	// Time is a String's time when the string is in RFC 3339 form
	// (HasTime).
	Time    time.Time
	HasTime bool
	// Num is a Number's value.
	Num float64
	// Bool is a Bool's value.
	Bool bool
}

func (*And) expr()     {}
func (*Or) expr()      {}
func (*Not) expr()     {}
func (*Compare) expr() {}
func (*In) expr()      {}
func (*IsSet) expr()   {}

func join(terms []Expr, sep string) string {
	s := "("
	for i, t := range terms {
		if i > 0 {
			s += " " + sep + " "
		}
		s += t.String()
	}
	return s + ")"
}

func (e *And) String() string     { return join(e.Terms, "AND") }
func (e *Or) String() string      { return join(e.Terms, "OR") }
func (e *Not) String() string     { return "NOT " + e.X.String() }
func (e *Compare) String() string { return e.Field.Name + " " + e.Op + " " + e.Value.String() }

func (e *In) String() string {
	s := e.Field.Name
	if e.Not {
		s += " NOT"
	}
	s += " IN ("
	for i, v := range e.Values {
		if i > 0 {
			s += ", "
		}
		s += v.String()
	}
	return s + ")"
}

func (e *IsSet) String() string {
	if e.Not {
		return e.Field.Name + " IS NOT SET"
	}
	return e.Field.Name + " IS SET"
}

func (v Value) String() string {
	switch v.Kind {
	case String:
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v.Str) + `"`
	case Number:
		return strconv.FormatFloat(v.Num, 'g', -1, 64)
	default:
		if v.Bool {
			return "TRUE"
		}
		return "FALSE"
	}
}
