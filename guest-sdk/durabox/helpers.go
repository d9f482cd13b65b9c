package durabox

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
)

// NewGUID returns an id that is unique within the instance's execution and
// the same on every replay: derived from the instance id, the execution's
// start and a counter, never from the clock or randomness.
func (c *Context) NewGUID() string {
	c.rt.own("ctx.NewGUID")
	c.rt.guids++
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d/%d", c.rt.instanceID, c.rt.startedAt, c.rt.guids))
	sum[6] = sum[6]&0x0f | 0x50 // a name-based UUID (version 5 layout)
	sum[8] = sum[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
}

// Rand returns the instance's own random source: a ChaCha8 stream seeded
// from the instance id and its execution's start (as NewGUID is), so two
// instances draw different values and each draws the same values on every
// replay. It is one source for the whole execution, drawn from in the order
// the orchestration's code runs. Use it rather than math/rand's global
// functions, whose stream is the same in every instance of a module.
func (c *Context) Rand() *rand.Rand {
	c.rt.own("ctx.Rand")
	if c.rt.rand == nil {
		seed := sha256.Sum256(fmt.Appendf(nil, "durabox-rand/%s/%d", c.rt.instanceID, c.rt.startedAt))
		c.rt.rand = rand.New(rand.NewChaCha8(seed))
	}
	return c.rt.rand
}
