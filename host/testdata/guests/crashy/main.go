// Command crashy is a guest whose orchestrations fail in the ways a guest
// can: a panic, a deadlock, a blocking sleep, a timer of the time package,
// and an activity that panics.
// Its Version orchestration reports the module's version (set at link time),
// to show which module an instance runs on.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

var version = "v1"

func init() {
	durabox.RegisterOrchestration("Sleeps", func(ctx *durabox.Context, _ any) (string, error) {
		time.Sleep(10 * time.Millisecond)
		return "woke", nil
	})
	durabox.RegisterOrchestration("Version", func(ctx *durabox.Context, wait string) (string, error) {
		d, err := time.ParseDuration(wait)
		if err != nil {
			return "", err
		}
		if err := ctx.Sleep(d); err != nil {
			return "", err
		}
		return durabox.Call[string](ctx, "Version", nil)
	})
	durabox.RegisterActivity("Version", func(context.Context, any) (string, error) { return version, nil })
	durabox.RegisterOrchestration("Panic", func(ctx *durabox.Context, msg string) (string, error) {
		panic(msg)
	})
	durabox.RegisterOrchestration("Deadlock", func(ctx *durabox.Context, _ any) (string, error) {
		never := make(chan int)
		go func() { <-never }()
		<-never
		return "", nil
	})
	durabox.RegisterOrchestration("CallPanickyActivity", func(ctx *durabox.Context, _ any) (string, error) {
		return durabox.Call[string](ctx, "PanickyActivity", nil)
	})
	durabox.RegisterOrchestration("Echo", func(ctx *durabox.Context, s string) (string, error) {
		return durabox.Call[string](ctx, "Echo", s)
	})
	// Each timer of the time package, left running at the end of the
	// first step of an orchestration; timers stopped within the step; an
	// activity that uses them all.
	durabox.RegisterOrchestration("AfterFunc", func(ctx *durabox.Context, _ any) (string, error) {
		time.AfterFunc(time.Hour, func() {})
		return "created", nil
	})
	durabox.RegisterOrchestration("NewTimer", func(ctx *durabox.Context, _ any) (string, error) {
		time.NewTimer(time.Hour)
		return "created", nil
	})
	durabox.RegisterOrchestration("After", func(ctx *durabox.Context, _ any) (string, error) {
		select {
		case <-time.After(time.Hour):
			return "fired", nil
		default:
			return "created", nil
		}
	})
	durabox.RegisterOrchestration("NewTicker", func(ctx *durabox.Context, _ any) (string, error) {
		time.NewTicker(time.Hour)
		return "created", nil
	})
	durabox.RegisterOrchestration("Tick", func(ctx *durabox.Context, _ any) (string, error) {
		select {
		case <-time.Tick(time.Hour):
			return "ticked", nil
		default:
			return "created", nil
		}
	})
	durabox.RegisterOrchestration("WithTimeout", func(ctx *durabox.Context, _ any) (string, error) {
		c, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		return sleepThenErr(ctx, c)
	})
	durabox.RegisterOrchestration("WithDeadline", func(ctx *durabox.Context, _ any) (string, error) {
		c, cancel := context.WithDeadline(context.Background(), ctx.Now().Add(time.Hour))
		defer cancel()
		return sleepThenErr(ctx, c)
	})
	durabox.RegisterOrchestration("StopsItsTimers", func(ctx *durabox.Context, _ any) (string, error) {
		time.NewTimer(time.Hour).Stop()
		time.AfterFunc(time.Hour, func() {}).Stop()
		c, cancel := context.WithTimeout(context.Background(), time.Hour)
		cancel()
		if _, err := rand.Read(make([]byte, 8)); err != nil {
			return "", err
		}
		return sleepThenErr(ctx, c)
	})
	durabox.RegisterOrchestration("CallRealTimers", func(ctx *durabox.Context, _ any) (string, error) {
		return durabox.Call[string](ctx, "RealTimers", nil)
	})
	durabox.RegisterActivity("RealTimers", func(ctx context.Context, _ any) (string, error) {
		fired := make(chan string, 1)
		time.AfterFunc(time.Millisecond, func() { fired <- "AfterFunc" })
		got := []string{<-fired}
		<-time.NewTimer(time.Millisecond).C
		<-time.After(time.Millisecond)
		<-time.NewTicker(time.Millisecond).C
		<-time.Tick(time.Millisecond)
		c, cancel := context.WithTimeout(ctx, time.Millisecond)
		defer cancel()
		<-c.Done()
		got = append(got, "NewTimer", "After", "NewTicker", "Tick", "WithTimeout: "+c.Err().Error())
		return strings.Join(got, ", "), nil
	})
	durabox.RegisterActivity("PanickyActivity", func(context.Context, any) (string, error) {
		panic(errors.New("activity went wrong"))
	})
	durabox.RegisterActivity("Echo", func(_ context.Context, s string) (string, error) { return s, nil })
}

// sleepThenErr ends the step (the timers the orchestration started still
// running), and returns what c says of itself in the next.
func sleepThenErr(ctx *durabox.Context, c context.Context) (string, error) {
	if err := ctx.Sleep(time.Millisecond); err != nil {
		return "", err
	}
	return fmt.Sprint(c.Err()), nil
}

func main() {}
