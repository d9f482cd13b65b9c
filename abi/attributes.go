package abi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Limits of search attributes (CommandSetAttributes).
const (
	// MaxAttributes is the most search attributes an instance holds at
	// once.
	MaxAttributes = 64
	// MaxAttributeNameBytes bounds an attribute's name.
	MaxAttributeNameBytes = 64
	// MaxAttributeValueBytes bounds a string attribute, and each element
	// of a keyword list.
	MaxAttributeValueBytes = 256
	// MaxKeywords is the most elements of a keyword list, which has at
	// least one.
	MaxKeywords = 32
)

// AttributeType is the type of a search attribute's value.
type AttributeType string

// The types of search attribute.
const (
	AttributeString   AttributeType = "string"
	AttributeInt      AttributeType = "int"
	AttributeFloat    AttributeType = "float"
	AttributeBool     AttributeType = "bool"
	AttributeTime     AttributeType = "time"
	AttributeKeywords AttributeType = "keywords"
)

// Attribute is one search attribute an orchestration set, or removed
// (Type empty). Exactly the field of its type holds its value.
type Attribute struct {
	Name     string
	Type     AttributeType
	String   string
	Int      int64
	Float    float64
	Bool     bool
	Time     time.Time
	Keywords []string
}

// attributeRule states the rule of an attribute's name.
var attributeRule = fmt.Sprintf("a search attribute's name is a letter or _ followed by letters, digits or _, at most %d bytes, and not one of %s",
	MaxAttributeNameBytes, strings.Join(reservedAttributes, ", "))

// reservedAttributes are the names a filter gives its built-in fields and
// its keywords (store/query), which no attribute may take.
var reservedAttributes = []string{"status", "name", "id", "created", "updated", "has",
	"and", "or", "not", "in", "is", "set", "true", "false"}

// CheckAttributeName returns a *TextError unless name is a valid search
// attribute name.
func CheckAttributeName(name string) error {
	fail := func(problem string) error {
		return &TextError{What: "search attribute name", Value: name, Problem: problem, Rule: attributeRule}
	}
	switch {
	case name == "":
		return fail("is empty")
	case len(name) > MaxAttributeNameBytes:
		return fail(fmt.Sprintf("is %d bytes", len(name)))
	case slices.Contains(reservedAttributes, strings.ToLower(name)):
		return fail("is reserved")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return fail(fmt.Sprintf("has %q at byte %d", c, i))
		}
	}
	return nil
}

// attributeJSON is an attribute's value on the wire: one field set, or
// the whole value null for a removal.
type attributeJSON struct {
	String   *string     `json:"string,omitempty"`
	Int      json.Number `json:"int,omitempty"`
	Float    *float64    `json:"float,omitempty"`
	Bool     *bool       `json:"bool,omitempty"`
	Time     *string     `json:"time,omitempty"`
	Keywords *[]string   `json:"keywords,omitempty"`
}

// EncodeAttributes is the JSON of CommandSetAttributes's Input: an object
// from each name to its typed value ({"string": "c-42"}, {"int": 5},
// {"float": 2.5}, {"bool": true}, {"time": "2026-11-27T20:00:00Z"},
// {"keywords": ["a", "b"]}), or to null to remove it; names in byte order.
func EncodeAttributes(attrs []Attribute) []byte {
	m := make(map[string]*attributeJSON, len(attrs))
	for _, a := range attrs {
		var v *attributeJSON
		switch a.Type {
		case AttributeString:
			v = &attributeJSON{String: &a.String}
		case AttributeInt:
			v = &attributeJSON{Int: json.Number(fmt.Sprint(a.Int))}
		case AttributeFloat:
			v = &attributeJSON{Float: &a.Float}
		case AttributeBool:
			v = &attributeJSON{Bool: &a.Bool}
		case AttributeTime:
			t := a.Time.UTC().Format(time.RFC3339Nano)
			v = &attributeJSON{Time: &t}
		case AttributeKeywords:
			k := append([]string{}, a.Keywords...)
			v = &attributeJSON{Keywords: &k}
		}
		m[a.Name] = v
	}
	b, _ := json.Marshal(m) // maps of these types always encode
	return b
}

// DecodeAttributes reads and checks the Input of a CommandSetAttributes:
// at most MaxAttributes names, each valid (CheckAttributeName) with one
// value of its type within the limits, or null. It returns them in byte
// order of their names.
func DecodeAttributes(b []byte) ([]Attribute, error) {
	var m map[string]*json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("search attributes are a JSON object from names to typed values: %s", Quote(string(b)))
	}
	if len(m) > MaxAttributes {
		return nil, fmt.Errorf("%d search attributes set at once; an instance holds at most %d", len(m), MaxAttributes)
	}
	out := make([]Attribute, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if err := CheckAttributeName(name); err != nil {
			return nil, err
		}
		a, err := decodeAttribute(name, m[name])
		if err != nil {
			return nil, fmt.Errorf("search attribute %s: %w", name, err)
		}
		out = append(out, a)
	}
	return out, nil
}

func decodeAttribute(name string, raw *json.RawMessage) (Attribute, error) {
	a := Attribute{Name: name}
	if raw == nil {
		return a, nil // removed
	}
	var v attributeJSON
	d := json.NewDecoder(bytes.NewReader(*raw))
	d.DisallowUnknownFields()
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return a, fmt.Errorf("its value %s is not one of {\"string\": …}, {\"int\": …}, {\"float\": …}, {\"bool\": …}, {\"time\": …}, {\"keywords\": […]} or null", Quote(string(*raw)))
	}
	set := 0
	for _, ok := range []bool{v.String != nil, v.Int != "", v.Float != nil, v.Bool != nil, v.Time != nil, v.Keywords != nil} {
		if ok {
			set++
		}
	}
	if set != 1 {
		return a, fmt.Errorf("its value %s must have exactly one type", Quote(string(*raw)))
	}
	checkString := func(s string) error {
		if len(s) > MaxAttributeValueBytes {
			return fmt.Errorf("%s is %d bytes; a value is at most %d", Quote(s), len(s), MaxAttributeValueBytes)
		}
		return CheckText("value", s)
	}
	switch {
	case v.String != nil:
		a.Type, a.String = AttributeString, *v.String
		return a, checkString(a.String)
	case v.Int != "":
		n, err := v.Int.Int64()
		if err != nil {
			return a, fmt.Errorf("%s is not a 64-bit integer", v.Int)
		}
		a.Type, a.Int = AttributeInt, n
	case v.Float != nil:
		if math.IsNaN(*v.Float) || math.IsInf(*v.Float, 0) {
			return a, fmt.Errorf("a float attribute is a finite number")
		}
		a.Type, a.Float = AttributeFloat, *v.Float
	case v.Bool != nil:
		a.Type, a.Bool = AttributeBool, *v.Bool
	case v.Time != nil:
		t, err := time.Parse(time.RFC3339Nano, *v.Time)
		if err != nil {
			return a, fmt.Errorf("%s is not a time in RFC 3339 form", Quote(*v.Time))
		}
		a.Type, a.Time = AttributeTime, t.UTC()
	default:
		switch n := len(*v.Keywords); {
		case n == 0:
			return a, fmt.Errorf("a keyword list is empty; it has 1 to %d elements (null removes the attribute)", MaxKeywords)
		case n > MaxKeywords:
			return a, fmt.Errorf("a keyword list of %d elements; at most %d", n, MaxKeywords)
		}
		for _, k := range *v.Keywords {
			if err := checkString(k); err != nil {
				return a, err
			}
		}
		a.Type, a.Keywords = AttributeKeywords, *v.Keywords
	}
	return a, nil
}
