// Command netuse reaches outside the sandbox the only ways a guest can: an
// activity's HTTP request through the host, and an activity's environment
// variables. Its orchestrations also try both directly, and must not get
// anywhere.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/guest-sdk/durabox/durahttp"
)

func fetch(url string) (string, error) {
	resp, err := durahttp.Client().Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("X-Test"), body), err
}

func init() {
	durabox.RegisterActivity("Fetch", func(_ context.Context, url string) (string, error) { return fetch(url) })
	durabox.RegisterActivity("Getenv", func(_ context.Context, key string) (string, error) { return os.Getenv(key), nil })
	durabox.RegisterOrchestration("Fetch", func(ctx *durabox.Context, url string) (string, error) {
		return durabox.Call[string](ctx, "Fetch", url)
	})
	durabox.RegisterOrchestration("FetchDirectly", func(ctx *durabox.Context, url string) (string, error) {
		return fetch(url)
	})
	// Traced calls an activity a worker runs (the test routes Getenv to
	// a task queue) and one the host runs, which makes an HTTP request.
	durabox.RegisterOrchestration("Traced", func(ctx *durabox.Context, url string) (string, error) {
		greeting, err := durabox.Call[string](ctx, "Getenv", "GREETING")
		if err != nil {
			return "", err
		}
		page, err := durabox.Call[string](ctx, "Fetch", url)
		return greeting + " / " + page, err
	})
	durabox.RegisterOrchestration("Getenv", func(ctx *durabox.Context, key string) ([]string, error) {
		inActivity, err := durabox.Call[string](ctx, "Getenv", key)
		return []string{inActivity, os.Getenv(key)}, err
	})
}

func main() {}
