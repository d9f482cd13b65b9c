// Package worker runs activities outside the host: in any Go program,
// with its own database drivers, message brokers and cloud SDKs, none of
// which an activity in the sandbox can reach. A worker serves one task
// queue of a host (or of several hosts sharing a PostgreSQL database):
// it polls the host for the tasks of that queue, runs the activity each
// names, and hands back its result, over the host's HTTP API (the worker
// protocol, docs/workers.md).
//
//	c, _ := client.New("http://127.0.0.1:8080", client.Options{Token: token})
//	err := worker.New(c).OnQueue("payments").
//		Register("Charge", Charge).
//		Run(ctx)
//
// An activity has the signature it has in a module,
// func(context.Context, In) (Out, error), and the same helpers:
// durabox.ActivityInfoFrom, durabox.Heartbeat and durabox.LastHeartbeat. An
// orchestration sends a call to the queue with durabox.OnQueue (or the
// module's durabox.DefaultQueue, or the host's serve --activity-queue).
//
// Activities run at least once: a worker that dies mid-attempt leaves its
// task to another once the lease ends, with the details of the attempt's
// last heartbeat. Orchestrations stay deterministic whatever a worker
// does: the host records each result before the orchestration sees it.
//
// Each attempt runs in an OpenTelemetry span of the worker's tracer
// provider (WithTracerProvider; the global one, otel.GetTracerProvider,
// unless told otherwise), named "activity NAME". When the host traces
// (durabox serve --otlp-endpoint), the span is a child of the host's span
// of the attempt, in the trace of the attempt's instance: the task carries
// its W3C traceparent (docs/tracing.md). The activity's context holds the
// span, for what the activity calls in its turn.
package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
)

// DefaultQueue is the task queue a worker serves unless OnQueue names
// another.
const DefaultQueue = "default"

// Worker runs the activities registered with it, for the tasks of one
// task queue. Configure it, then call Run; it is not to be changed once
// running.
type Worker struct {
	c           *client.Client
	queue       string
	concurrency int
	log         *slog.Logger
	tracer      trace.Tracer
	activities  map[string]activity
}

// activity is a registered activity function and its input type.
type activity struct {
	fn reflect.Value
	in reflect.Type
}

// New returns a worker that takes tasks from the host c talks to: of
// DefaultQueue, four at a time, logging nothing, until told otherwise.
func New(c *client.Client) *Worker {
	return &Worker{c: c, queue: DefaultQueue, concurrency: 4, log: slog.New(slog.DiscardHandler), activities: map[string]activity{}}
}

// tracerName names the worker's tracer (its instrumentation scope).
const tracerName = "github.com/durabox/durabox/worker"

// WithTracerProvider makes the worker start the span of each attempt
// with tp, instead of the global tracer provider.
func (w *Worker) WithTracerProvider(tp trace.TracerProvider) *Worker {
	w.tracer = tp.Tracer(tracerName)
	return w
}

// OnQueue makes the worker serve the task queue queue.
func (w *Worker) OnQueue(queue string) *Worker {
	w.queue = queue
	return w
}

// WithConcurrency makes the worker run up to n (≥ 1) attempts at once.
func (w *Worker) WithConcurrency(n int) *Worker {
	w.concurrency = n
	return w
}

// WithLogger makes the worker log to l: the tasks it could not complete,
// and the host's refusals.
func (w *Worker) WithLogger(l *slog.Logger) *Worker {
	w.log = l
	return w
}

var (
	contextType = reflect.TypeFor[context.Context]()
	errorType   = reflect.TypeFor[error]()
)

// Register registers fn as the activity name. fn must be a
// func(context.Context, In) (Out, error): In is decoded from the call's
// input (JSON), Out encoded as its result. Register panics when fn is not,
// or when name is taken: a program's mistake, found at its start.
func (w *Worker) Register(name string, fn any) *Worker {
	v := reflect.ValueOf(fn)
	t := v.Type()
	if t.Kind() != reflect.Func || t.NumIn() != 2 || t.NumOut() != 2 || t.In(0) != contextType || t.Out(1) != errorType {
		panic(fmt.Sprintf("worker: Register(%q): the activity is a %s; it must be a func(context.Context, In) (Out, error)", name, t))
	}
	if _, taken := w.activities[name]; taken {
		panic(fmt.Sprintf("worker: Register(%q): an activity of that name is registered already", name))
	}
	w.activities[name] = activity{fn: v, in: t.In(1)}
	return w
}

// backoff bounds the wait between polls that failed.
const (
	minBackoff = 200 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// Run polls for tasks and runs them until ctx is done, then waits for the
// attempts running to end (their contexts are done too; what they return
// then is not reported, and their tasks go to another attempt once their
// leases end). It returns nil then, or, at once, an error the host gives
// that polling again cannot mend: a queue or an activity name it refuses,
// or a token it does not accept.
func (w *Worker) Run(ctx context.Context) error {
	if len(w.activities) == 0 {
		return errors.New("worker: no activity is registered; Register one before Run")
	}
	if w.concurrency < 1 {
		return fmt.Errorf("worker: the concurrency is %d; it must be at least 1", w.concurrency)
	}
	names := make([]string, 0, len(w.activities))
	for name := range w.activities {
		names = append(names, name)
	}
	sort.Strings(names)
	slots := make(chan struct{}, w.concurrency)
	var running sync.WaitGroup
	defer running.Wait()
	wait := minBackoff
	for {
		// Ask for as many tasks as there are free slots, at least one.
		slots <- struct{}{}
		free := 1
	fill:
		for free < w.concurrency {
			select {
			case slots <- struct{}{}:
				free++
			default:
				break fill
			}
		}
		tasks, err := w.c.PollTasks(ctx, api.TaskPollRequest{Queue: w.queue, Activities: names, Max: free})
		for range free - len(tasks) {
			<-slots
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case fatal(err):
			return err
		case err != nil:
			w.log.Warn("worker: poll failed; trying again", "queue", w.queue, "in", wait, "err", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
			wait = min(wait*2, maxBackoff)
			continue
		}
		wait = minBackoff
		for _, t := range tasks {
			running.Add(1)
			go func() {
				defer func() { <-slots; running.Done() }()
				w.attempt(ctx, t)
			}()
		}
	}
}

// fatal reports whether the host refused a poll in a way that polling
// again will not change: a bad request (400), or a token it refuses (401,
// 403).
func fatal(err error) bool {
	var e *client.Error
	return errors.As(err, &e) && (e.StatusCode == 400 || e.StatusCode == 401 || e.StatusCode == 403 || e.StatusCode == 404)
}

// attempt runs one attempt of task t and reports its outcome, unless ctx
// ended first.
func (w *Worker) attempt(ctx context.Context, t api.Task) {
	a := &attempt{w: w, t: t}
	actx, span := w.span(ctx, t)
	defer span.End()
	actx, cancel := context.WithCancel(actx)
	defer cancel()
	a.cancel = cancel
	info := durabox.ActivityInfo{Name: t.Activity, InstanceID: t.InstanceID, Attempt: t.Attempt}
	actx = durabox.WithActivity(actx, info, t.LastHeartbeat, func(details []byte) error { return a.beat(actx, details) })
	actx = durabox.WithCompletionToken(actx, t.CompletionToken)
	if t.HeartbeatTimeoutMs == 0 {
		// The call asks for no heartbeats: keep the lease while the
		// activity runs, however long, and learn of a cancellation.
		stop := a.keepAlive(actx, time.Duration(t.LeaseMs)*time.Millisecond/3)
		defer stop()
	}
	out, failure, pending := w.run(actx, t)
	if ctx.Err() != nil {
		span.SetAttributes(attribute.String("durabox.outcome", "not reported"))
		return // the worker is stopping: the task goes to another attempt
	}
	ended(span, failure, pending)
	var err error
	switch {
	case pending:
		err = w.c.AwaitTask(ctx, t.Token)
	case failure != nil:
		err = w.c.FailTask(ctx, t.Token, *failure)
	default:
		err = w.c.CompleteTask(ctx, t.Token, out)
	}
	switch {
	case client.IsTaskLost(err):
		w.log.Warn("worker: the task's outcome was not taken: its lease ended (it was too slow to heartbeat, or past its deadline) and it went to another attempt",
			"activity", t.Activity, "instance", t.InstanceID, "attempt", t.Attempt, "err", err)
	case err != nil:
		w.log.Error("worker: the task's outcome was not reported; it goes to another attempt once its lease ends",
			"activity", t.Activity, "instance", t.InstanceID, "attempt", t.Attempt, "err", err)
	}
}

// span starts the span of an attempt of task t, under the host's span of
// it when the task carries one, and returns ctx with it.
func (w *Worker) span(ctx context.Context, t api.Task) (context.Context, trace.Span) {
	tracer := w.tracer
	if tracer == nil {
		tracer = otel.GetTracerProvider().Tracer(tracerName)
	}
	if t.Traceparent != "" {
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": t.Traceparent})
	}
	return tracer.Start(ctx, "activity "+t.Activity, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		attribute.String("durabox.instance.id", t.InstanceID), attribute.String("durabox.activity.name", t.Activity),
		attribute.Int("durabox.activity.attempt", t.Attempt), attribute.String("durabox.activity.queue", t.Queue)))
}

// ended records on span how the attempt ended: failed with failure,
// pending (its outcome comes from outside), or completed.
func ended(span trace.Span, failure *api.FailTaskRequest, pending bool) {
	switch {
	case failure != nil:
		span.SetAttributes(attribute.String("durabox.outcome", "failed"))
		span.RecordError(errors.New(failure.Message))
		span.SetStatus(codes.Error, failure.Message)
	case pending:
		span.SetAttributes(attribute.String("durabox.outcome", "pending"))
	default:
		span.SetAttributes(attribute.String("durabox.outcome", "completed"))
	}
}

// run calls the activity of task t and returns its result as JSON, or
// its failure, or pending when it left its outcome to its completion
// token (durabox.CompleteLater). A panic fails the attempt, with its
// stack.
func (w *Worker) run(ctx context.Context, t api.Task) (out json.RawMessage, failure *api.FailTaskRequest, pending bool) {
	defer func() {
		if r := recover(); r != nil {
			out, failure = nil, &api.FailTaskRequest{Message: fmt.Sprintf("panic: %v", r), Details: string(debug.Stack())}
		}
	}()
	act, ok := w.activities[t.Activity]
	if !ok {
		return nil, &api.FailTaskRequest{Message: fmt.Sprintf("this worker registers no activity %q", t.Activity)}, false
	}
	in := reflect.New(act.in)
	if len(t.Input) > 0 {
		if err := json.Unmarshal(t.Input, in.Interface()); err != nil {
			return nil, &api.FailTaskRequest{Message: fmt.Sprintf("activity %q: its input does not decode into %s: %v", t.Activity, act.in, err)}, false
		}
	}
	res := act.fn.Call([]reflect.Value{reflect.ValueOf(ctx), in.Elem()})
	if err, _ := res[1].Interface().(error); err != nil {
		pending, why := durabox.ResultPending(ctx, err)
		if pending {
			return nil, nil, true
		}
		if why != nil {
			err = why
		}
		return nil, &api.FailTaskRequest{Message: err.Error(), Type: durabox.ErrorType(err)}, false
	}
	b, err := json.Marshal(res[0].Interface())
	if err != nil {
		return nil, &api.FailTaskRequest{Message: fmt.Sprintf("activity %q: its result does not encode to JSON: %v", t.Activity, err)}, false
	}
	return b, nil, false
}

// attempt is one attempt's side of the heartbeats.
type attempt struct {
	w      *Worker
	t      api.Task
	cancel context.CancelFunc
	// mu orders the heartbeats of the activity and of keepAlive.
	mu sync.Mutex
}

// beat sends a heartbeat with details (nil: none). When the host answers
// that the result is no longer wanted, or that the task is lost, the
// attempt's context is cancelled.
func (a *attempt) beat(ctx context.Context, details []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	resp, err := a.w.c.Heartbeat(ctx, a.t.Token, details)
	switch {
	case client.IsTaskLost(err):
		a.cancel()
		return fmt.Errorf("worker: the task is lost: %w", err)
	case err != nil:
		return err
	case resp.CancelRequested:
		return durabox.ErrActivityCanceled
	}
	return nil
}

// keepAlive sends a heartbeat without details every every, until the
// function it returns is called; a cancellation cancels ctx.
func (a *attempt) keepAlive(ctx context.Context, every time.Duration) (stop func()) {
	every = max(every, 100*time.Millisecond)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := a.beat(ctx, nil); errors.Is(err, durabox.ErrActivityCanceled) {
					a.cancel()
				} else if err != nil && ctx.Err() == nil {
					a.w.log.Warn("worker: heartbeat failed", "activity", a.t.Activity, "instance", a.t.InstanceID, "err", err)
				}
			}
		}
	}()
	return func() { close(done); <-stopped }
}
