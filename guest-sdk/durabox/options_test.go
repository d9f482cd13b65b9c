package durabox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

func TestCallOptionsFillTheCommand(t *testing.T) {
	t.Parallel()
	var cmd abi.Command
	for _, o := range []CallOption{OnQueue("payments"), WithHeartbeatTimeout(1500 * time.Microsecond)} {
		if err := o.apply("Charge", &cmd); err != nil {
			t.Fatal(err)
		}
	}
	if cmd.TaskQueue != "payments" || cmd.HeartbeatTimeoutMillis != 2 {
		t.Fatalf("command %+v; want task queue payments and a heartbeat timeout of 2ms (rounded up)", cmd)
	}
	for _, tt := range []struct {
		o    CallOption
		want string
	}{
		{OnQueue("pay ments"), `durabox: OnQueue("pay ments") for activity "Charge": task queue "pay ments" has ' '`},
		{OnQueue(""), `durabox: OnQueue("") for activity "Charge": task queue "" is empty`},
		{WithHeartbeatTimeout(0), `durabox: WithHeartbeatTimeout(0s) for activity "Charge": the duration must be positive`},
	} {
		if err := tt.o.apply("Charge", &abi.Command{}); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("error %v; want one beginning %q", err, tt.want)
		}
	}
}

func TestHeartbeatsOfAnActivityRunOutsideTheHost(t *testing.T) {
	t.Parallel()
	var sent []string
	cancelled := false
	beat := func(details []byte) error {
		sent = append(sent, string(details))
		if cancelled {
			return ErrActivityCanceled
		}
		return nil
	}
	ctx := WithActivity(context.Background(), ActivityInfo{Name: "Transcode", InstanceID: "v-1", Attempt: 2}, []byte(`{"frame":40}`), beat)
	var last struct{ Frame int }
	if ok, err := LastHeartbeat(ctx, &last); !ok || err != nil || last.Frame != 40 {
		t.Fatalf("LastHeartbeat = %v, %v, %+v; want frame 40", ok, err, last)
	}
	if info, ok := ActivityInfoFrom(ctx); !ok || info.Attempt != 2 || info.Name != "Transcode" {
		t.Fatalf("ActivityInfoFrom = %+v, %v", info, ok)
	}
	if err := Heartbeat(ctx, map[string]int{"frame": 41}); err != nil || ctx.Err() != nil {
		t.Fatalf("Heartbeat = %v (ctx %v); want it taken", err, ctx.Err())
	}
	cancelled = true
	if err := Heartbeat(ctx, nil); !errors.Is(err, ErrActivityCanceled) || ctx.Err() == nil {
		t.Fatalf("Heartbeat once cancelled = %v (ctx %v); want ErrActivityCanceled and a done context", err, ctx.Err())
	}
	if want := []string{`{"frame":41}`, ``}; strings.Join(sent, "|") != strings.Join(want, "|") {
		t.Fatalf("sent %q; want %q", sent, want)
	}
	if ok, _ := LastHeartbeat(context.Background(), &last); ok {
		t.Fatal("LastHeartbeat outside an activity reported details")
	}
	if err := Heartbeat(context.Background(), 1); err == nil {
		t.Fatal("Heartbeat outside an activity returned no error")
	}
}
