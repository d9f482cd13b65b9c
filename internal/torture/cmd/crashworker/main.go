// Command crashworker is the worker outside the host of the crash test's
// external-worker mode (crashtest --workers N): it serves, on the task
// queue "torture", the activities of the workload's modules, written
// again in Go to give the same results, and prints the tally module's
// marks as Mark does in the module, so that the run's log holds every
// run of every Mark. The crash test kills it as it kills the hosts.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/worker"
)

// Queue is the task queue the crash test's hosts send every activity to.
const Queue = "torture"

// The workload's activities' inputs, as their modules define them.
type (
	attempt struct {
		Number     int `json:"number"`
		Failures   int `json:"failures"`
		WorkMillis int `json:"workMillis"`
	}
	line struct {
		SKU   string `json:"sku"`
		Qty   int    `json:"qty"`
		Cents int    `json:"cents,omitempty"`
	}
	run struct {
		Key        string `json:"key"`
		WorkMillis int    `json:"workMillis"`
	}
)

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func main() {
	hosts := flag.String("hosts", "", "the hosts' `ADDRS`, host:port, comma-separated: each poll goes to the next")
	flag.Parse()
	addrs := strings.Split(*hosts, ",")
	if *hosts == "" {
		fmt.Fprintln(os.Stderr, "crashworker: --hosts is required")
		os.Exit(2)
	}
	var next atomic.Uint64
	rt := roundTrip(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Host = addrs[next.Add(1)%uint64(len(addrs))]
		return http.DefaultTransport.RoundTrip(r)
	})
	c := client.New("http://"+addrs[0], &client.Options{HTTPClient: &http.Client{Transport: rt}})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	w := worker.New(c).OnQueue(Queue).WithConcurrency(16).WithLogger(log).
		Register("SayHello", func(_ context.Context, name string) (string, error) { return fmt.Sprintf("Hello, %s!", name), nil }).
		Register("FlakyTask", func(ctx context.Context, a attempt) (string, error) {
			if err := sleep(ctx, time.Duration(a.WorkMillis)*time.Millisecond); err != nil {
				return "", err
			}
			if a.Number <= a.Failures {
				return "", fmt.Errorf("attempt %d failed on purpose", a.Number)
			}
			return fmt.Sprintf("succeeded on attempt %d", a.Number), nil
		}).
		Register("Dispatch", func(_ context.Context, parcel string) (string, error) {
			if parcel == "lost" {
				return "", fmt.Errorf("parcel %q cannot be found", parcel)
			}
			return parcel + " shipped", nil
		}).
		Register("Notify", func(_ context.Context, message string) (string, error) { return message, nil }).
		Register("Count", func(ctx context.Context, document string) (int, error) {
			words := len(strings.Fields(document))
			return words, sleep(ctx, time.Duration(words)*time.Millisecond)
		}).
		Register("Beat", func(_ context.Context, round int) (string, error) { return fmt.Sprintf("beat %d", round), nil }).
		Register("PriceLine", func(_ context.Context, l line) (int, error) { return 250 * l.Qty, nil }).
		Register("Charge", func(_ context.Context, cents int) (string, error) {
			if cents <= 0 {
				return "", errors.New("nothing to charge")
			}
			return fmt.Sprintf("receipt-%d", cents), nil
		}).
		Register("Mark", func(ctx context.Context, r run) (string, error) {
			info, _ := durabox.ActivityInfoFrom(ctx)
			// Printed before the work, as the module's Mark does, so that a
			// kill right after still leaves it in the log.
			fmt.Printf("worker: mark %s delivery %d\n", r.Key, info.Attempt)
			return r.Key, sleep(ctx, time.Duration(r.WorkMillis)*time.Millisecond)
		})
	fmt.Println("crashworker: polling")
	if err := w.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "crashworker:", err)
		os.Exit(1)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
