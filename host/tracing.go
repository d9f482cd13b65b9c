package host

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// Tracing (Options.TraceExporter). Every span of one instance is in the
// instance's trace, whose id, like the span id of the instance's own span,
// is derived from the instance's id (instanceIDs): any host, before or
// after a restart, on any store, finds the same trace with nothing stored,
// and an operator finds it from the id alone (RATIONALE.md, "Why is an
// instance's trace id derived from its id?"). The instance's span is
// exported when the instance ends, from its creation to its end; each
// turn, activity attempt, update and query of it is a child of that span,
// as is each schedule firing that started it, and the span of a worker's
// attempt is a child of the host's span of that attempt, whose context
// the task's lease carries (api.Task.Traceparent). With no exporter,
// Host.trace is nil and every method of it returns at once: no span, no
// allocation.

// tracing exports the host's spans; nil when tracing is off.
type tracing struct {
	tp *sdktrace.TracerProvider
	tr trace.Tracer
	// now is the host's clock (Options.Clock), which stamps every span:
	// on PostgreSQL the database server's time, which all the hosts
	// sharing it keep, as the instance's creation time is.
	now func() time.Time
}

// tracerName names the host's tracer (its instrumentation scope).
const tracerName = "github.com/durabox/durabox/host"

// The attributes of the host's spans.
const (
	attrInstance      = attribute.Key("durabox.instance.id")
	attrExecution     = attribute.Key("durabox.execution")
	attrOrchestration = attribute.Key("durabox.orchestration")
	attrModule        = attribute.Key("durabox.module")
	attrActivity      = attribute.Key("durabox.activity.name")
	attrAttempt       = attribute.Key("durabox.activity.attempt")
	attrQueue         = attribute.Key("durabox.activity.queue")
	attrUpdate        = attribute.Key("durabox.update.name")
	attrUpdateID      = attribute.Key("durabox.update.id")
	attrQuery         = attribute.Key("durabox.query.name")
	attrSchedule      = attribute.Key("durabox.schedule.name")
	attrSlot          = attribute.Key("durabox.schedule.slot")
	attrEvents        = attribute.Key("durabox.turn.events")
	attrOutcome       = attribute.Key("durabox.outcome")
)

// newTracing returns the tracing that exports to exp with a batch span
// processor, as service durabox, stamping spans with now; nil for a nil
// exp.
func newTracing(exp sdktrace.SpanExporter, now func() time.Time) *tracing {
	if exp == nil {
		return nil
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithIDGenerator(ids{}),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "durabox"), attribute.String("service.version", BuildVersion().Durabox))),
	)
	return &tracing{tp: tp, tr: tp.Tracer(tracerName), now: now}
}

// close exports the spans still buffered and stops the exporter.
func (t *tracing) close(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// instanceIDs are the trace id of instance id's trace and the span id of
// its own span: the first 24 bytes of the SHA-256 of its id.
func instanceIDs(id string) (trace.TraceID, trace.SpanID) {
	sum := sha256.Sum256([]byte(id))
	var t trace.TraceID
	var s trace.SpanID
	copy(t[:], sum[:16])
	copy(s[:], sum[16:24])
	return t, s
}

// under returns ctx with the span of instance id as its parent.
func under(ctx context.Context, id string) context.Context {
	t, s := instanceIDs(id)
	return trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{TraceID: t, SpanID: s, TraceFlags: trace.FlagsSampled, Remote: true}))
}

// wantedSpan carries, in a context, the ids ids gives the span started
// with it: a span whose id was said before it began (the instance's, and
// the host's span of a worker's attempt, whose id the lease carried).
type wantedSpan struct{}

// ids makes the ids of spans: the ones a context wants (wantedSpan), else
// random ones.
type ids struct{}

func (ids) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if sc, ok := ctx.Value(wantedSpan{}).(trace.SpanContext); ok {
		return sc.TraceID(), sc.SpanID()
	}
	var t trace.TraceID
	binary.BigEndian.PutUint64(t[:8], rand.Uint64())
	binary.BigEndian.PutUint64(t[8:], rand.Uint64()|1)
	return t, randomSpanID()
}

func (ids) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if sc, ok := ctx.Value(wantedSpan{}).(trace.SpanContext); ok {
		return sc.SpanID()
	}
	return randomSpanID()
}

// randomSpanID returns a random span id, never zero (which is no id).
func randomSpanID() trace.SpanID {
	var s trace.SpanID
	binary.BigEndian.PutUint64(s[:], rand.Uint64()|1)
	return s
}

// instanceAttrs are the attributes that say which instance a span is of.
func instanceAttrs(inst store.Instance) []attribute.KeyValue {
	return []attribute.KeyValue{attrInstance.String(inst.ID), attrExecution.Int64(inst.ExecutionID),
		attrOrchestration.String(inst.Name), attrModule.String(inst.ModuleHash)}
}

// failed marks sp as failed with message.
func failed(sp trace.Span, message string) {
	sp.RecordError(fmt.Errorf("%s", message))
	sp.SetStatus(codes.Error, message)
}

// turn starts the span of the turn of item; nil when tracing is off.
func (t *tracing) turn(ctx context.Context, item *store.WorkItem) trace.Span {
	if t == nil {
		return nil
	}
	_, sp := t.tr.Start(under(ctx, item.Instance.ID), "turn "+item.Instance.Name, trace.WithTimestamp(t.now()), trace.WithAttributes(instanceAttrs(item.Instance)...))
	return sp
}

// turnEnded ends sp, the span of a turn that committed r (nil: it did not
// commit: it runs again, or failed its instance).
func (t *tracing) turnEnded(sp trace.Span, r *ran) {
	if t == nil || sp == nil {
		return
	}
	switch {
	case r == nil:
		sp.SetAttributes(attrOutcome.String("not committed"))
	default:
		sp.SetAttributes(attrOutcome.String(string(r.res.Status)), attrEvents.Int(len(r.res.NewEvents)))
		if r.res.Failure != nil {
			failed(sp, r.res.Failure.Message)
		}
	}
	sp.End(trace.WithTimestamp(t.now()))
}

// ended exports the span of instance inst, which ended now with status
// (and failure, when it failed).
func (t *tracing) ended(ctx context.Context, inst store.Instance, status engine.Status, failure *engine.Failure) {
	if t == nil {
		return
	}
	end := t.now()
	tid, sid := instanceIDs(inst.ID)
	ctx = context.WithValue(ctx, wantedSpan{}, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
	start := inst.CreatedAt
	if start.IsZero() || start.After(end) {
		start = end
	}
	_, sp := t.tr.Start(ctx, "instance "+inst.Name, trace.WithNewRoot(), trace.WithTimestamp(start), trace.WithAttributes(instanceAttrs(inst)...))
	sp.SetAttributes(attrOutcome.String(string(status)))
	if failure != nil {
		failed(sp, failure.Message)
	}
	sp.End(trace.WithTimestamp(end))
}

// activity starts the span of an attempt of w the host runs, and returns
// ctx with it (which an outgoing HTTP request of the attempt carries as
// its traceparent); nil and ctx when tracing is off.
func (t *tracing) activity(ctx context.Context, w *store.ActivityWork) (context.Context, trace.Span) {
	if t == nil {
		return ctx, nil
	}
	return t.tr.Start(under(ctx, w.InstanceID), "activity "+w.Task.Name, trace.WithTimestamp(t.now()), trace.WithAttributes(activityAttrs(w)...))
}

// activityAttrs are the attributes of an attempt of w.
func activityAttrs(w *store.ActivityWork) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attrInstance.String(w.InstanceID), attrExecution.Int64(w.ExecutionID), attrModule.String(w.ModuleHash),
		attrActivity.String(w.Task.Name), attrAttempt.Int(w.Failures + w.Attempt)}
	if w.Task.Queue != "" {
		attrs = append(attrs, attrQueue.String(w.Task.Queue))
	}
	return attrs
}

// activityEnded ends sp, the span of an attempt that ended with result
// (of no Kind: it was cut short, and records nothing).
func (t *tracing) activityEnded(sp trace.Span, result engine.Event) {
	if t == nil {
		return
	}
	switch result.Kind {
	case "":
		sp.SetAttributes(attrOutcome.String("not recorded"))
	case engine.ActivityFailed:
		sp.SetAttributes(attrOutcome.String("failed"))
		failed(sp, result.Failure.Message)
	default:
		sp.SetAttributes(attrOutcome.String("completed"))
	}
	sp.End(trace.WithTimestamp(t.now()))
}

// leased returns the id of the host's span of an attempt of w, leased to
// a worker, and the traceparent (W3C Trace Context) the worker starts its
// own span under; empty when tracing is off.
func (t *tracing) leased(w *store.ActivityWork) (span, traceparent string) {
	if t == nil {
		return "", ""
	}
	tid, _ := instanceIDs(w.InstanceID)
	s := randomSpanID()
	return s.String(), "00-" + tid.String() + "-" + s.String() + "-01"
}

// workerEnded exports the host's span of a worker's attempt of the task
// tok names, leased then and ended now with result: the span whose id the
// lease gave the worker as its parent.
func (t *tracing) workerEnded(ctx context.Context, tok taskToken, result engine.Event) {
	var sid trace.SpanID
	if t == nil || len(tok.Span) != 2*len(sid) {
		return
	}
	if _, err := hex.Decode(sid[:], []byte(tok.Span)); err != nil {
		return
	}
	ctx = under(ctx, tok.InstanceID)
	ctx = context.WithValue(ctx, wantedSpan{}, trace.NewSpanContext(trace.SpanContextConfig{SpanID: sid}))
	w := tok.work()
	w.Attempt = tok.Delivery
	_, sp := t.tr.Start(ctx, "activity "+tok.Name, trace.WithTimestamp(time.Unix(0, tok.Leased)), trace.WithAttributes(activityAttrs(w)...))
	t.activityEnded(sp, result)
}

// update starts the span of the update u of instance id; nil when
// tracing is off.
func (t *tracing) update(ctx context.Context, id string, u store.Update) trace.Span {
	if t == nil {
		return nil
	}
	_, sp := t.tr.Start(under(ctx, id), "update "+u.Name, trace.WithTimestamp(t.now()), trace.WithAttributes(attrInstance.String(id), attrUpdate.String(u.Name), attrUpdateID.String(u.ID)))
	return sp
}

// updateEnded ends sp, the span of an update that stands as u, or was
// refused with err.
func (t *tracing) updateEnded(sp trace.Span, u store.Update, err error) {
	if t == nil {
		return
	}
	switch {
	case err != nil:
		sp.SetAttributes(attrOutcome.String("refused"))
		failed(sp, err.Error())
	default:
		sp.SetAttributes(attrOutcome.String(string(u.State)))
		if u.Failure != nil {
			failed(sp, u.Failure.Message)
		}
	}
	sp.End(trace.WithTimestamp(t.now()))
}

// query starts the span of the query name of instance id; nil when
// tracing is off.
func (t *tracing) query(ctx context.Context, id, name string) trace.Span {
	if t == nil {
		return nil
	}
	_, sp := t.tr.Start(under(ctx, id), "query "+name, trace.WithTimestamp(t.now()), trace.WithAttributes(attrInstance.String(id), attrQuery.String(name)))
	return sp
}

// queryEnded ends sp, the span of a query that ended with err.
func (t *tracing) queryEnded(sp trace.Span, err error) {
	if t == nil {
		return
	}
	sp.SetAttributes(attrOutcome.String(queryOutcome(err)))
	if err != nil {
		failed(sp, err.Error())
	}
	sp.End(trace.WithTimestamp(t.now()))
}

// fired exports the span of a fire of schedule sc, decided at f.Now and
// done now: in the trace of the instance it started, else in a trace of
// its own.
func (t *tracing) fired(ctx context.Context, sc store.Schedule, f store.ScheduleFire, run store.ScheduleRun) {
	if t == nil || f.Run == nil {
		return
	}
	opts := []trace.SpanStartOption{trace.WithTimestamp(f.Now), trace.WithAttributes(attrSchedule.String(sc.Name), attrSlot.String(run.Slot.UTC().Format(time.RFC3339)),
		attrOrchestration.String(sc.Orchestration), attrOutcome.String(string(run.Outcome)))}
	if run.InstanceID != "" {
		ctx = under(ctx, run.InstanceID)
		opts = append(opts, trace.WithAttributes(attrInstance.String(run.InstanceID)))
	} else {
		opts = append(opts, trace.WithNewRoot())
	}
	_, sp := t.tr.Start(ctx, "schedule "+sc.Name, opts...)
	if run.Outcome == store.RunFailed {
		failed(sp, run.Error)
	}
	sp.End(trace.WithTimestamp(t.now()))
}
