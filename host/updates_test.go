package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/metrics"
	"github.com/durabox/durabox/store"
)

// update sends an update and waits for its answer.
func (h *testHost) update(t *testing.T, id, name, data, updateID string) store.Update {
	t.Helper()
	u, err := h.Update(context.Background(), id, api.UpdateRequest{Name: name, Data: json.RawMessage(data), ID: updateID}, time.Minute)
	if err != nil {
		t.Fatalf("update %s: %v", name, err)
	}
	if !u.State.Answered() {
		t.Fatalf("update %s is %s after a minute", name, u.State)
	}
	return u
}

// kinds counts the events of each kind in events.
func kinds(events []engine.Event) map[engine.EventKind]int {
	n := map[engine.EventKind]int{}
	for _, ev := range events {
		n[ev.Kind]++
	}
	return n
}

// TestUpdatesAnswerOnTheCall sends a Cart updates through a real host: one
// whose handler awaits an activity and answers; one its validator refuses
// and one it has no handler for, which leave no trace; one sent again with
// the same id, answered with the first answer without running again; and
// the checkout, after which the instance completes and takes no more.
func TestUpdatesAnswerOnTheCall(t *testing.T) {
	t.Parallel()
	opts := host.Options{Metrics: metrics.New()}
	h := startHost(t, opts)
	h.deploy(t, "host/testdata/guests/updates")
	id := h.start(t, "Cart", `null`)

	u := h.update(t, id, "Add", `{"name":"apple","qty":2}`, "add-1")
	if u.State != store.UpdateCompleted || string(u.Result) != `1` {
		t.Fatalf("Add apple: %+v; want Completed with 1", u)
	}
	before := h.history(t, id)
	if k := kinds(before); k[engine.UpdateAccepted] != 1 || k[engine.UpdateCompleted] != 1 || k[engine.ActivityCompleted] != 1 {
		t.Fatalf("history after one update: %v", shape(before))
	}
	for _, tc := range []struct{ name, data, want string }{
		{"Add", `{"name":"pear","qty":0}`, "a quantity of at least 1"},
		{"Nope", `null`, `the instance handles no update "Nope" (it handles [Add Checkout Slow])`},
	} {
		u := h.update(t, id, tc.name, tc.data, "")
		if u.State != store.UpdateRefused || u.Failure == nil || !strings.Contains(u.Failure.Message, tc.want) {
			t.Fatalf("%s: %+v; want Refused with %q", tc.name, u, tc.want)
		}
	}
	if got := counted(t, opts.Metrics, "durabox_updates_total", "outcome", "refused"); got != 2 {
		t.Fatalf("%v updates counted refused; want 2", got)
	}
	again := h.update(t, id, "Add", `{"name":"apple","qty":2}`, "add-1")
	if again.State != store.UpdateCompleted || string(again.Result) != `1` {
		t.Fatalf("Add apple again with its id: %+v; want the first answer", again)
	}
	if after := h.history(t, id); !reflect.DeepEqual(after, before) {
		t.Fatalf("refused and repeated updates changed the history: %v, was %v", shape(after), shape(before))
	}
	if _, err := h.Update(context.Background(), id, api.UpdateRequest{Name: "Checkout", ID: "add-1"}, time.Minute); !errors.Is(err, api.ErrBadInput) {
		t.Fatalf("an update id used again for another update: %v; want ErrBadInput", err)
	}
	var items []string
	h.query(t, id, "Items", ``, &items)
	if !reflect.DeepEqual(items, []string{"apple"}) {
		t.Fatalf("Items = %q", items)
	}
	if u := h.update(t, id, "Checkout", `null`, ""); u.State != store.UpdateCompleted || string(u.Result) != `1` {
		t.Fatalf("Checkout: %+v", u)
	}
	inst := h.wait(t, id)
	if inst.Status != engine.StatusCompleted || string(inst.Result) != `["apple"]` {
		t.Fatalf("%s %s %+v", inst.Status, inst.Result, inst.Failure)
	}
	if _, err := h.Update(context.Background(), id, api.UpdateRequest{Name: "Add", Data: json.RawMessage(`{"name":"fig","qty":1}`)}, time.Minute); !errors.Is(err, api.ErrFinished) {
		t.Fatalf("an update of a finished instance: %v; want ErrFinished", err)
	}
	if u := h.update(t, id, "Add", `{"name":"apple","qty":2}`, "add-1"); string(u.Result) != `1` {
		t.Fatalf("the first update's answer, asked again of the finished instance: %+v", u)
	}
	rep, err := h.Replay(context.Background(), id, api.ReplayRequest{})
	if err != nil || !rep.OK() {
		t.Fatalf("the history of an updated instance does not replay: %+v, %v", rep, err)
	}
}

// TestUpdateWithStart starts a Cart with its first update in one call,
// then sends the next through the same call to the instance there; an
// update left unanswered when the orchestration ends is answered with a
// failure that says so.
func TestUpdateWithStart(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/updates")
	ctx := context.Background()
	u, started, err := h.StartWithUpdate(ctx, "", "Cart", nil, "cart-2", api.UpdateRequest{Name: "Add", Data: json.RawMessage(`{"name":"kiwi","qty":1}`)}, time.Minute)
	if err != nil || !started || u.State != store.UpdateCompleted || string(u.Result) != `1` {
		t.Fatalf("update with start: %+v, started %v, %v; want it started and answered 1", u, started, err)
	}
	u, started, err = h.StartWithUpdate(ctx, "", "Cart", nil, "cart-2", api.UpdateRequest{Name: "Add", Data: json.RawMessage(`{"name":"fig","qty":3}`)}, time.Minute)
	if err != nil || started || string(u.Result) != `2` {
		t.Fatalf("update with start of an instance there: %+v, started %v, %v; want only the update, answered 2", u, started, err)
	}
	// Slow sleeps an hour; the instance is cancelled meanwhile, and its
	// handler's sleep with it: the update fails.
	slow, err := h.Update(ctx, "cart-2", api.UpdateRequest{Name: "Slow", ID: "slow"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the handler of Slow sleeps", func(ctx context.Context) (bool, error) {
		u, err := h.st.GetUpdate(ctx, "cart-2", slow.ID)
		return u.State == store.UpdateAccepted, err
	})
	if err := h.Cancel(ctx, "cart-2", "abandoned"); err != nil {
		t.Fatal(err)
	}
	slow, err = h.AwaitUpdate(ctx, "cart-2", slow.ID, time.Minute)
	if err != nil || slow.State != store.UpdateFailed || slow.Failure == nil {
		t.Fatalf("Slow after the cancellation: %+v, %v; want Failed", slow, err)
	}
	if inst := h.wait(t, "cart-2"); inst.Status != engine.StatusCanceled {
		t.Fatalf("cart-2 is %s; want Canceled", inst.Status)
	}
}

// TestUpdateOfAModuleThatTakesNone: a module whose manifest does not say
// it takes updates (built before they existed) would take one and never
// answer it: the host refuses the update, saying what to do.
func TestUpdateOfAModuleThatTakesNone(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, boundaryGuest)
	id := h.start(t, "Emit", `null`)
	_, err := h.Update(context.Background(), id, api.UpdateRequest{Name: "Add", ID: "u1"}, time.Minute)
	if !errors.Is(err, api.ErrNotUpdatable) || !strings.Contains(err.Error(), "built before updates existed") {
		t.Fatalf("an update of an instance on a module that takes none: %v; want ErrNotUpdatable", err)
	}
	if _, err := h.st.GetUpdate(context.Background(), id, "u1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused update was recorded: %v", err)
	}
}
