// Command chaos is a guest whose orchestration draws on every source of
// nondeterminism a Go program has (the clock, math/rand, math/rand/v2,
// crypto/rand, ctx.Rand, ctx.NewGUID, map iteration order, select over
// several ready channels, goroutines) between every await, and sends what it saw to activities, so
// that any difference between two runs shows in the history.
package main

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	randv2 "math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Chaos", Chaos)
	durabox.RegisterActivity("Record", func(_ context.Context, s string) (string, error) { return s, nil })
}

// Chaos runs rounds of observations. In each it fans out three Record calls
// and awaits them one by one, observing again between awaits.
func Chaos(ctx *durabox.Context, rounds int) (string, error) {
	var seen []string
	for r := 0; r < rounds; r++ {
		futures := []*durabox.Future{
			ctx.CallActivity("Record", observe(ctx, "clock")),
			ctx.CallActivity("Record", observe(ctx, "random")),
			ctx.CallActivity("Record", observe(ctx, "goroutines")),
		}
		for _, f := range futures {
			var s string
			if err := f.Get(&s); err != nil {
				return "", err
			}
			seen = append(seen, s, observe(ctx, "maps"))
		}
		if _, err := durabox.Call[string](ctx, "Record", observe(ctx, "select")); err != nil {
			return "", err
		}
	}
	return fmt.Sprint(len(seen), " observations, last ", seen[len(seen)-1]), nil
}

func observe(ctx *durabox.Context, what string) string {
	switch what {
	case "clock":
		return "clock " + time.Now().Format(time.RFC3339Nano)
	case "random":
		b := make([]byte, 8)
		crand.Read(b)
		return fmt.Sprintf("random %d %d %s %d %s %s", rand.Int63(), randv2.Int64(), hex.EncodeToString(b), ctx.Rand().Int64(), ctx.NewGUID(), nans(time.Now().Year()/10000))
	case "maps":
		m := map[int]int{}
		for i := range 1000 {
			m[i] = i
		}
		h := fnv.New64a()
		for k := range m {
			fmt.Fprint(h, k, ",")
		}
		return fmt.Sprintf("maps %x", h.Sum64())
	case "select":
		chans := make([]chan int, 4)
		for i := range chans {
			chans[i] = make(chan int, 8)
			for j := 0; j < 8; j++ {
				chans[i] <- i
			}
		}
		var order strings.Builder
		for range 16 {
			select {
			case v := <-chans[0]:
				fmt.Fprint(&order, v)
			case v := <-chans[1]:
				fmt.Fprint(&order, v)
			case v := <-chans[2]:
				fmt.Fprint(&order, v)
			case v := <-chans[3]:
				fmt.Fprint(&order, v)
			}
		}
		return "select " + order.String()
	case "goroutines":
		var mu sync.Mutex
		var wg sync.WaitGroup
		var order []int
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < i%3+1; j++ {
					mu.Lock()
					order = append(order, i)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return fmt.Sprint("goroutines ", order)
	}
	panic("unknown observation " + what)
}

// nans returns the bit patterns of NaNs the processor makes (zero is 0,
// which the compiler cannot know, so that nothing is folded): 0/0 in both widths, and a NaN with a payload
// through arithmetic, so that a runtime that changed them would show.
func nans(zero int) string {
	z := float64(zero)
	payload := math.Float64frombits(0x7ff8_0000_0000_0123 + uint64(zero))
	return fmt.Sprintf("%x/%x/%x", math.Float64bits(z/z), math.Float32bits(float32(z)/float32(z)), math.Float64bits(payload*2+z))
}

func main() {}
