package durabox

import (
	"fmt"
	"math"
	"time"

	"github.com/durabox/durabox/abi"
)

// SetAttributes sets the instance's search attributes, by which clients
// find it (durabox list --where 'customer = "c-42" AND amount > 100'):
// each key is an attribute's name and replaces the attribute of that name;
// a nil value removes it; the others stay. A value is a string, an integer
// (int, int8 … int64, uint8 … uint32, a uint64 up to math.MaxInt64), a
// float (float32, float64; finite), a bool, a time.Time or a []string (a
// keyword list, which a filter's = matches by any element; an empty one
// removes the attribute, as nil does). It is recorded
// in history and does not wait; the host stores the attributes with the
// step's commit. A continue-as-new starts without them: set them again in
// the next execution.
//
// A name is a letter or _ followed by letters, digits or _, at most 64
// bytes, and none of status, name, id, created, updated (the fields every
// instance has) nor a keyword of the filter language; an instance holds at
// most 64 attributes. A value of another type panics; a name or value that
// breaks a rule fails the instance, saying which.
func (c *Context) SetAttributes(attrs map[string]any) {
	c.rt.own("ctx.SetAttributes")
	list := make([]abi.Attribute, 0, len(attrs))
	for name, v := range attrs {
		list = append(list, attribute(name, v))
	}
	c.rt.command(abi.Command{Kind: abi.CommandSetAttributes, Input: abi.EncodeAttributes(list)})
}

// attribute is the search attribute name of value v.
func attribute(name string, v any) abi.Attribute {
	a := abi.Attribute{Name: name}
	integer := func(n int64) abi.Attribute { a.Type, a.Int = abi.AttributeInt, n; return a }
	switch v := v.(type) {
	case nil:
		return a
	case string:
		a.Type, a.String = abi.AttributeString, v
	case int:
		return integer(int64(v))
	case int8:
		return integer(int64(v))
	case int16:
		return integer(int64(v))
	case int32:
		return integer(int64(v))
	case int64:
		return integer(v)
	case uint8:
		return integer(int64(v))
	case uint16:
		return integer(int64(v))
	case uint32:
		return integer(int64(v))
	case uint64:
		if v > math.MaxInt64 {
			panic(fmt.Sprintf("durabox: ctx.SetAttributes: attribute %q is %d, past the largest integer attribute, %d", name, v, int64(math.MaxInt64)))
		}
		return integer(int64(v))
	case float32:
		a.Type, a.Float = abi.AttributeFloat, float64(v)
	case float64:
		a.Type, a.Float = abi.AttributeFloat, v
	case bool:
		a.Type, a.Bool = abi.AttributeBool, v
	case time.Time:
		a.Type, a.Time = abi.AttributeTime, v
	case []string:
		if len(v) == 0 {
			return a // no keywords: removed
		}
		a.Type, a.Keywords = abi.AttributeKeywords, v
	default:
		panic(fmt.Sprintf("durabox: ctx.SetAttributes: attribute %q is a %T; a search attribute is a string, an integer, a float, a bool, a time.Time or a []string (nil removes it)", name, v))
	}
	return a
}
