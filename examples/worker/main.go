// Command worker runs the activities of the fulfil example
// (examples/wasm/fulfil) outside the host, where they can use what no
// activity in the sandbox can: RecordOrder writes each order to
// PostgreSQL (with pgx), PublishOrder appends it to a Redis stream (with
// go-redis). TranscodeVideo sends a heartbeat per frame and resumes from
// the last one after a lost attempt; SlowReport runs until its result is
// no longer wanted, then cleans up.
//
//	durabox serve --db durabox.db &
//	durabox deploy examples/wasm/fulfil/fulfil.wasm
//	go run ./examples/worker --postgres postgres://postgres@127.0.0.1:5432/postgres --redis 127.0.0.1:6379 &
//	durabox start Fulfil --input '{"id": "o-1", "customer": "c-42", "cents": 1250}' --wait
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/worker"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// Order and Video are the activities' inputs, as examples/wasm/fulfil
// sends them.
type (
	Order struct {
		ID       string `json:"id"`
		Customer string `json:"customer"`
		Cents    int    `json:"cents"`
	}
	Video struct {
		Name   string `json:"name"`
		Frames int    `json:"frames"`
	}
)

// activities are the example's activities, on their connections.
type activities struct {
	db         *pgxpool.Pool
	rdb        *redis.Client
	frameDelay time.Duration
}

// ordersTable keeps the orders RecordOrder records, one row each.
const ordersTable = `CREATE TABLE IF NOT EXISTS fulfilled_orders (
	row_id   bigserial PRIMARY KEY,
	order_id text NOT NULL UNIQUE,
	customer text NOT NULL,
	cents    integer NOT NULL
)`

// RecordOrder records the order and returns its row's id. It runs at
// least once: a second run of the same order finds its row.
func (a *activities) RecordOrder(ctx context.Context, o Order) (int64, error) {
	var id int64
	err := a.db.QueryRow(ctx, `INSERT INTO fulfilled_orders (order_id, customer, cents) VALUES ($1, $2, $3)
		ON CONFLICT (order_id) DO UPDATE SET order_id = EXCLUDED.order_id RETURNING row_id`, o.ID, o.Customer, o.Cents).Scan(&id)
	return id, err
}

// PublishOrder appends the order to the Redis stream "orders" and returns
// the entry's id. A second run of the same order finds the id it kept.
func (a *activities) PublishOrder(ctx context.Context, o Order) (string, error) {
	key := "fulfil:published:" + o.ID
	if id, err := a.rdb.Get(ctx, key).Result(); err == nil {
		return id, nil
	} else if !errors.Is(err, redis.Nil) {
		return "", err
	}
	id, err := a.rdb.XAdd(ctx, &redis.XAddArgs{Stream: "orders", Values: map[string]any{"order": o.ID, "customer": o.Customer, "cents": o.Cents}}).Result()
	if err != nil {
		return "", err
	}
	return id, a.rdb.Set(ctx, key, id, 0).Err()
}

// TranscodeVideo "transcodes" the video a frame at a time, with a
// heartbeat after each, and resumes after the frame the last heartbeat of
// an earlier attempt named.
func (a *activities) TranscodeVideo(ctx context.Context, v Video) (string, error) {
	var last struct {
		Frame int `json:"frame"`
	}
	resumed, err := durabox.LastHeartbeat(ctx, &last)
	if err != nil {
		return "", err
	}
	for frame := last.Frame + 1; frame <= v.Frames; frame++ {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(a.frameDelay):
		}
		if err := durabox.Heartbeat(ctx, map[string]int{"frame": frame}); err != nil {
			return "", err
		}
	}
	if resumed {
		return fmt.Sprintf("%s: %d frames, resumed after frame %d", v.Name, v.Frames, last.Frame), nil
	}
	return fmt.Sprintf("%s: %d frames", v.Name, v.Frames), nil
}

// SlowReport works until its result is no longer wanted, then records in
// Redis that it cleaned up (the key report:cleaned:INSTANCE).
func (a *activities) SlowReport(ctx context.Context, _ time.Duration) (string, error) {
	<-ctx.Done()
	info, _ := durabox.ActivityInfoFrom(ctx)
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := a.rdb.Set(cleanup, "report:cleaned:"+info.InstanceID, "yes", time.Hour).Err(); err != nil {
		return "", err
	}
	return "", ctx.Err()
}

// run is the command: flags in args, logs to stderr.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hostURL := fs.String("host", hostAddr(os.Getenv("DURABOX_ADDR")), "the Durabox host's `URL` (default $DURABOX_ADDR, else http://127.0.0.1:7070, as durabox's)")
	tokenFile := fs.String("token-file", "", "send the worker token in `FILE` (default $DURABOX_TOKEN)")
	pgURL := fs.String("postgres", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "the PostgreSQL `URL` RecordOrder writes to")
	redisAddr := fs.String("redis", "127.0.0.1:6379", "the Redis `ADDR` PublishOrder and SlowReport write to")
	queues := fs.String("queues", "orders,events,media", "serve the task `QUEUES`, comma-separated")
	frameDelay := fs.Duration("frame-delay", 100*time.Millisecond, "how long TranscodeVideo takes per frame")
	if err := fs.Parse(args); err != nil {
		return err
	}
	token := os.Getenv("DURABOX_TOKEN")
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fmt.Errorf("worker: --token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	c := client.New(*hostURL, &client.Options{Token: token})
	db, err := pgxpool.New(ctx, *pgURL)
	if err != nil {
		return fmt.Errorf("worker: --postgres: %w", err)
	}
	defer db.Close()
	if _, err := db.Exec(ctx, ordersTable); err != nil {
		return fmt.Errorf("worker: create the orders table: %w", err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: *redisAddr})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("worker: --redis %s: %w", *redisAddr, err)
	}
	a := &activities{db: db, rdb: rdb, frameDelay: *frameDelay}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	byQueue := map[string]func(*worker.Worker) *worker.Worker{
		"orders": func(w *worker.Worker) *worker.Worker { return w.Register("RecordOrder", a.RecordOrder) },
		"events": func(w *worker.Worker) *worker.Worker { return w.Register("PublishOrder", a.PublishOrder) },
		"media": func(w *worker.Worker) *worker.Worker {
			return w.Register("TranscodeVideo", a.TranscodeVideo).Register("SlowReport", a.SlowReport)
		},
	}
	g, ctx := errgroup.WithContext(ctx)
	for _, q := range strings.Split(*queues, ",") {
		register, ok := byQueue[q]
		if !ok {
			return fmt.Errorf("worker: --queues names %q; this worker serves orders, events and media", q)
		}
		w := register(worker.New(c).OnQueue(q).WithLogger(log))
		g.Go(func() error { return w.Run(ctx) })
	}
	log.Info("worker running", "host", *hostURL, "queues", *queues)
	return g.Wait()
}

// hostAddr is the host's URL from $DURABOX_ADDR, which may leave out the
// scheme (http), as durabox's --addr may.
func hostAddr(addr string) string {
	switch {
	case addr == "":
		return "http://127.0.0.1:7070"
	case strings.Contains(addr, "://"):
		return addr
	}
	return "http://" + addr
}
