package engine

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/durabox/durabox/abi"
)

// countAttributes keeps the names of the search attributes the
// execution's commands set, and refuses a SetAttributes command (checked
// by checkCommand) after which the instance would hold more than
// abi.MaxAttributes. It runs on every command, live and on replay, so the
// refusal is the same on both.
func (x *Execution) countAttributes(c *abi.Command) error {
	if c.Kind != abi.CommandSetAttributes {
		return nil
	}
	attrs, err := abi.DecodeAttributes(c.Input)
	if err != nil {
		return err
	}
	if x.attributes == nil {
		x.attributes = map[string]bool{}
	}
	for _, a := range attrs {
		if a.Type == "" {
			delete(x.attributes, a.Name)
		} else {
			x.attributes[a.Name] = true
		}
	}
	if len(x.attributes) > abi.MaxAttributes {
		return fmt.Errorf("the instance would hold %d search attributes; it holds at most %d (remove some with a nil value)", len(x.attributes), abi.MaxAttributes)
	}
	return nil
}

// MergeAttributes returns attrs with the search attributes of ev (an
// AttributesSet) applied: each replaces the one of its name, by name. A
// removed one stays in the result, without a type, so that a store
// removes it. An event whose attributes do not decode (which checkCommand
// refused before recording it) changes nothing.
func MergeAttributes(attrs []abi.Attribute, ev *Event) []abi.Attribute {
	set, err := abi.DecodeAttributes(ev.Input)
	if err != nil {
		return attrs
	}
	for _, a := range set {
		i := slices.IndexFunc(attrs, func(b abi.Attribute) bool { return b.Name == a.Name })
		if i < 0 {
			attrs = append(attrs, a)
		} else {
			attrs[i] = a
		}
	}
	slices.SortFunc(attrs, func(a, b abi.Attribute) int { return cmp.Compare(a.Name, b.Name) })
	return attrs
}

// Attributes returns the search attributes an execution's events leave:
// those its AttributesSet events set and did not remove, by name (what a
// reset that keeps events gives the instance).
func Attributes(events []Event) []abi.Attribute {
	var attrs []abi.Attribute
	for i := range events {
		if events[i].Kind == AttributesSet {
			attrs = MergeAttributes(attrs, &events[i])
		}
	}
	return slices.DeleteFunc(attrs, func(a abi.Attribute) bool { return a.Type == "" })
}
