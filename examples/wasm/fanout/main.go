// Command fanout is a fan-out/fan-in: one activity per item, all started at
// once, joined in the order of the items whatever order they finish in.
package main

import (
	"context"
	"strings"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("WordCount", WordCount)
	durabox.RegisterActivity("Count", Count)
}

// WordCount counts the words of every document at once and sums them.
func WordCount(ctx *durabox.Context, documents []string) (int, error) {
	var futures []*durabox.Future
	for _, d := range documents {
		futures = append(futures, ctx.CallActivity("Count", d))
	}
	counts, err := durabox.All[int](futures...)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	return total, nil
}

// Count counts a document's words; longer documents take longer.
func Count(_ context.Context, document string) (int, error) {
	words := len(strings.Fields(document))
	time.Sleep(time.Duration(words) * time.Millisecond)
	return words, nil
}

func main() {}
