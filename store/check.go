package store

import "fmt"

// Check is what a check of a whole database found (durabox check-db):
// what was checked, and each problem, in words. A check reads; it changes
// nothing.
type Check struct {
	// Ran says what was checked, one line a check, in the order they ran.
	Ran []string
	// Problems says what is wrong, one line a problem; none means the
	// checks that ran found nothing.
	Problems []string
}

// Did records a check that ran.
func (c *Check) Did(format string, args ...any) {
	c.Ran = append(c.Ran, fmt.Sprintf(format, args...))
}

// Problem records a problem.
func (c *Check) Problem(format string, args ...any) {
	c.Problems = append(c.Problems, fmt.Sprintf(format, args...))
}
