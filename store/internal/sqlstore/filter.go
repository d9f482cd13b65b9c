package sqlstore

import (
	"strings"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/store/query"
)

// builtinColumns are the columns of instances the filter's built-in
// fields read.
var builtinColumns = map[string]string{"status": "status", "name": "name", "id": "id", "created": "created_at", "updated": "updated_at"}

// expr returns the condition on instances of a filter, its values bound
// as arguments. A condition on a search attribute is "id IN" the instances
// a range of one of instance_attributes' indexes holds (name, then the
// column of the value's type): the database reads that range, never every
// instance's attributes.
func (w *Where) expr(e query.Expr) string {
	switch e := e.(type) {
	case *query.And:
		return w.join(e.Terms, " AND ")
	case *query.Or:
		return w.join(e.Terms, " OR ")
	case *query.Not:
		return "NOT (" + w.expr(e.X) + ")"
	case *query.IsSet:
		cond := "id IN (SELECT a.instance_id FROM instance_attributes a WHERE a.name = " + w.Arg(e.Field.Name) + ")"
		if e.Not {
			return "NOT (" + cond + ")"
		}
		return cond
	case *query.In:
		in := func() string {
			var terms []string
			for _, v := range e.Values {
				terms = append(terms, w.compare(e.Field, "=", v))
			}
			return "(" + strings.Join(terms, " OR ") + ")"
		}
		if e.Not {
			return w.notEqual(e.Field, in)
		}
		return in()
	case *query.Compare:
		if e.Op == "!=" {
			return w.notEqual(e.Field, func() string { return w.compare(e.Field, "=", e.Value) })
		}
		return w.compare(e.Field, e.Op, e.Value)
	}
	panic("sqlstore: a filter of an unknown kind") // query.Parse makes no other
}

func (w *Where) join(terms []query.Expr, sep string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = w.expr(t)
	}
	return "(" + strings.Join(parts, sep) + ")"
}

// notEqual is the condition that f is set (a built-in always is) and the
// condition eq makes does not hold. eq adds its arguments after the
// condition on f's being set has added its own, in placeholder order.
func (w *Where) notEqual(f query.Field, eq func() string) string {
	if f.Builtin {
		return "NOT " + eq()
	}
	set := w.expr(&query.IsSet{Field: f})
	return "(" + set + " AND NOT " + eq() + ")"
}

// compare is the condition f op v, op not being !=.
func (w *Where) compare(f query.Field, op string, v query.Value) string {
	if f.Builtin {
		col := builtinColumns[f.Name]
		if col == "created_at" || col == "updated_at" {
			return col + " " + op + " " + w.Arg(Nanos(v.Time))
		}
		return col + " " + op + " " + w.Arg(v.Str)
	}
	// attr is the condition that the attribute's column col compares by
	// op with value (and, if typ is set, that the attribute has type typ).
	// Arguments are added in the order of their placeholders.
	attr := func(col string, value any, typ string) string {
		cond := "id IN (SELECT a.instance_id FROM instance_attributes a WHERE a.name = " + w.Arg(f.Name) + " AND a." + col + " " + op + " " + w.Arg(value)
		if typ != "" {
			cond += " AND a.type = '" + typ + "'"
		}
		return cond + ")"
	}
	switch v.Kind {
	case query.Number:
		return attr("num", v.Num, "")
	case query.Bool:
		b := int64(0)
		if v.Bool {
			b = 1
		}
		return attr("ival", b, string(abi.AttributeBool))
	}
	cond := attr("str", v.Str, "")
	if v.HasTime {
		cond = "(" + cond + " OR " + attr("ival", Nanos(v.Time), string(abi.AttributeTime)) + ")"
	}
	return cond
}
