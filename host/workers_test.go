package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/store"
)

// pollOne polls queue, waiting up to wait, and returns the one task it
// got, or fails the test.
func (h *testHost) pollOne(t *testing.T, queue string, wait time.Duration) api.Task {
	t.Helper()
	tasks, err := h.PollTasks(context.Background(), store.TaskPoll{Queue: queue}, 5, wait)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("poll of %s: %+v, %v; want one task", queue, tasks, err)
	}
	return tasks[0]
}

// queueCounts returns the task queues' counts.
func (h *testHost) queueCounts(t *testing.T) []store.TaskQueueStats {
	t.Helper()
	q, err := h.Queue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return q.Queues
}

// TestTheWorkerProtocol drives the fulfil example's tasks as a worker
// does, through the host's methods the API serves: a poll gets a task of
// its queue only; a completion is taken once, and a second one, or a
// heartbeat after it, is refused as lost; a bad token is refused saying
// so; a queue no worker serves does not hold up another; a heartbeat past
// the attempt's deadline fails the attempt as timed out.
func TestTheWorkerProtocol(t *testing.T) {
	t.Parallel()
	var ahead atomic.Int64
	h := startHost(t, host.Options{Clock: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }, ActivityTimeout: time.Minute})
	h.deploy(t, "examples/wasm/fulfil")
	ctx := context.Background()
	h.startAt(t, "Fulfil", `{"id": "o-1", "customer": "c-42", "cents": 1250}`, "o-1")
	if tasks, err := h.PollTasks(ctx, store.TaskPoll{Queue: "events"}, 5, 0); err != nil || len(tasks) != 0 {
		t.Fatalf("a poll of events got %+v, %v; want nothing: the order is recorded first", tasks, err)
	}
	record := h.pollOne(t, "orders", 30*time.Second)
	if record.Activity != "RecordOrder" || record.InstanceID != "o-1" || record.Attempt != 1 || !strings.Contains(string(record.Input), `"o-1"`) {
		t.Fatalf("task %+v; want RecordOrder of o-1, attempt 1", record)
	}
	if got := h.queueCounts(t); len(got) != 1 || got[0] != (store.TaskQueueStats{Queue: "orders", Running: 1}) {
		t.Fatalf("queues %+v; want orders with one running", got)
	}
	if err := h.CompleteTask(ctx, "not-a-token", json.RawMessage(`1`)); !errors.Is(err, api.ErrBadInput) || !strings.Contains(err.Error(), "is not a task token") {
		t.Fatalf("completion with a bad token: %v; want ErrBadInput saying it is not a task token", err)
	}
	if err := h.CompleteTask(ctx, record.Token, json.RawMessage(`{"broken"`)); !errors.Is(err, api.ErrBadInput) {
		t.Fatalf("completion with a result that is not JSON: %v; want ErrBadInput", err)
	}
	if err := h.CompleteTask(ctx, record.Token, json.RawMessage(`17`)); err != nil {
		t.Fatal(err)
	}
	if err := h.CompleteTask(ctx, record.Token, json.RawMessage(`18`)); !errors.Is(err, api.ErrTaskLost) {
		t.Fatalf("a second completion: %v; want ErrTaskLost", err)
	}
	if _, err := h.HeartbeatTask(ctx, record.Token, nil); !errors.Is(err, api.ErrTaskLost) {
		t.Fatalf("a heartbeat after the completion: %v; want ErrTaskLost", err)
	}

	// A queue no worker serves holds up no other.
	h.startAt(t, "Fulfil", `{"id": "o-2", "customer": "c-43", "cents": 99}`, "o-2")
	h.startAt(t, "Transcode", `{"name": "intro.mp4", "frames": 3}`, "v-1")
	transcode := h.pollOne(t, "media", 30*time.Second)
	if transcode.Activity != "TranscodeVideo" || transcode.HeartbeatTimeoutMs != 2000 || transcode.LeaseMs != 2000 {
		t.Fatalf("task %+v; want TranscodeVideo with a heartbeat timeout and a lease of 2s", transcode)
	}
	if err := h.FailTask(ctx, transcode.Token, engine.Failure{}); !errors.Is(err, api.ErrBadInput) {
		t.Fatalf("a failure without a message: %v; want ErrBadInput", err)
	}
	if err := h.CompleteTask(ctx, transcode.Token, json.RawMessage(`"done"`)); err != nil {
		t.Fatal(err)
	}
	if inst := h.wait(t, "v-1"); inst.Status != engine.StatusCompleted || string(inst.Result) != `"done"` {
		t.Fatalf("v-1 is %s with %s; want Completed with the worker's result", inst.Status, inst.Result)
	}

	// o-1's PublishOrder: its attempt outlives its deadline.
	publish := h.pollOne(t, "events", 30*time.Second)
	if publish.InstanceID != "o-1" || publish.Activity != "PublishOrder" {
		t.Fatalf("task %+v; want PublishOrder of o-1", publish)
	}
	if resp, err := h.HeartbeatTask(ctx, publish.Token, json.RawMessage(`{"sent": false}`)); err != nil || resp.CancelRequested {
		t.Fatalf("a heartbeat in time: %+v, %v", resp, err)
	}
	ahead.Store(int64(2 * time.Minute))
	if _, err := h.HeartbeatTask(ctx, publish.Token, nil); !errors.Is(err, api.ErrTaskLost) || !strings.Contains(err.Error(), "past its deadline") {
		t.Fatalf("a heartbeat past the deadline: %v; want ErrTaskLost saying so", err)
	}
	inst := h.wait(t, "o-1")
	if inst.Status != engine.StatusFailed || !strings.Contains(inst.Failure.Message, `activity "PublishOrder" timed out`) {
		t.Fatalf("o-1 is %s with %+v; want Failed, PublishOrder timed out", inst.Status, inst.Failure)
	}
	if got := h.queueCounts(t); len(got) != 1 || got[0] != (store.TaskQueueStats{Queue: "orders", Waiting: 1}) {
		t.Fatalf("queues %+v; want orders with o-2's task waiting", got)
	}
}

// TestActivityQueuesRouteCallsToWorkers maps the hello example's
// SayHello to a task queue on the host's side: the host does not run it
// in the module, a worker of the queue does; the history says what the
// orchestration asked for.
func TestActivityQueuesRouteCallsToWorkers(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{ActivityQueues: map[string]string{"SayHello": "greetings"}})
	h.deploy(t, "examples/wasm/hello")
	handler, err := server.New(h.Host, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := h.start(t, "Greeting", `"world"`)
	details := func() api.InstanceDetails {
		t.Helper()
		var d api.InstanceDetails
		for deadline := time.Now().Add(time.Minute); len(d.Activities) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/v1/instances/"+id, nil))
			d = api.InstanceDetails{}
			if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	if d := details(); len(d.Activities) != 1 || !d.Activities[0].NoWorker || d.Activities[0].Queue != "greetings" || d.Activities[0].Running ||
		len(d.Warnings) != 1 || d.Warnings[0] != "its call of SayHello waits on task queue greetings, which no worker has polled (through this host, since it started)" {
		t.Fatalf("details %+v; want SayHello waiting on greetings, which no worker polled, and a warning saying so", d)
	}
	task := h.pollOne(t, "greetings", 30*time.Second)
	if d := details(); len(d.Activities) != 1 || d.Activities[0].NoWorker || !d.Activities[0].Running || d.Activities[0].Attempt != 1 || len(d.Warnings) != 0 {
		t.Fatalf("details %+v; want SayHello's attempt 1 running, and no warning", d)
	}
	if task.Activity != "SayHello" || string(task.Input) != `"world"` {
		t.Fatalf("task %+v; want SayHello of world", task)
	}
	if err := h.CompleteTask(context.Background(), task.Token, json.RawMessage(`"Hello from a worker, world"`)); err != nil {
		t.Fatal(err)
	}
	if inst := h.wait(t, id); string(inst.Result) != `"Hello from a worker, world"` {
		t.Fatalf("result %s; want the worker's", inst.Result)
	}
	for _, ev := range h.history(t, id) {
		if ev.Kind == engine.ActivityScheduled && ev.TaskQueue != "" {
			t.Fatalf("history records %+v; want the call as the orchestration made it, with no queue", ev)
		}
	}
	if _, err := host.New(h.st, host.Options{ActivityQueues: map[string]string{"SayHello": "bad queue"}}); err == nil || !strings.Contains(err.Error(), `task queue "bad queue" has ' '`) {
		t.Fatalf("a bad queue in ActivityQueues: %v; want it refused, saying why", err)
	}
}

// TestAWorkersTaskCompletedFromOutside has a worker leave a task to its
// completion token (as package worker does after durabox.CompleteLater):
// the task is no longer the worker's, and the token completes the call.
func TestAWorkersTaskCompletedFromOutside(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "examples/wasm/fulfil")
	h.startAt(t, "Transcode", `{"name": "intro.mp4", "frames": 3}`, "v-1")
	task := h.pollOne(t, "media", 30*time.Second)
	if !strings.HasPrefix(task.CompletionToken, "dbxc.") {
		t.Fatalf("task %+v; want a completion token", task)
	}
	ctx := context.Background()
	if err := h.AwaitTask(ctx, task.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := h.HeartbeatTask(ctx, task.Token, nil); !errors.Is(err, api.ErrTaskLost) {
		t.Fatalf("a heartbeat after the worker let the task go: %v; want ErrTaskLost", err)
	}
	if err := h.CompleteTask(ctx, task.CompletionToken, json.RawMessage(`"transcoded elsewhere"`)); err != nil {
		t.Fatal(err)
	}
	if inst := h.wait(t, "v-1"); inst.Status != engine.StatusCompleted || string(inst.Result) != `"transcoded elsewhere"` {
		t.Fatalf("v-1 is %s with %s; want Completed with the result from outside", inst.Status, inst.Result)
	}
}
