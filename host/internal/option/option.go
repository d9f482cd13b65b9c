// Package option fills the defaults of the counts and durations of an
// Options struct, and refuses negative ones, the same way in each.
package option

import (
	"fmt"
	"time"
)

// Field is an options field that is a count or a duration, with its
// default.
type Field[T int | time.Duration] struct {
	Name    string
	Value   *T
	Default T
}

// Fill gives the fields that are zero their defaults, and refuses
// a negative one.
func Fill[T int | time.Duration](fields []Field[T]) error {
	for _, f := range fields {
		if *f.Value < 0 {
			return fmt.Errorf("host: %s is %v; it must be zero (for the default, %v) or more", f.Name, *f.Value, f.Default)
		}
		if *f.Value == 0 {
			*f.Value = f.Default
		}
	}
	return nil
}
