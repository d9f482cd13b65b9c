package api

import (
	"encoding/json"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
)

// The bodies of deploying, starting, reading and messaging instances.

// Module is a deployed module.
type Module struct {
	// Hash is the hex sha256 of the module's bytes; it identifies the module.
	Hash string `json:"hash"`
	// Orchestrations and Activities are the names the module registers.
	Orchestrations []string `json:"orchestrations"`
	Activities     []string `json:"activities"`
	// EnvKeys names the environment variables its activities see (their
	// values stay on the host).
	EnvKeys    []string  `json:"envKeys,omitempty"`
	DeployedAt time.Time `json:"deployedAt"`
	// Instances counts the instances that run on the module, per status
	// (GET /v1/modules only; statuses no instance has are left out).
	Instances map[engine.Status]int `json:"instances,omitempty"`
	// Refused, when set, says why the host that answers cannot run the
	// module (its runtime or its settings refuse it, where another host
	// deployed it): its instances and activities wait for a host that
	// can (GET /v1/modules only).
	Refused string `json:"refused,omitempty"`
}

// Instance is an orchestration instance as it stands.
type Instance struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// ModuleHash is the module the instance started with and runs on.
	ModuleHash  string          `json:"moduleHash"`
	ExecutionID int64           `json:"executionId"`
	Status      engine.Status   `json:"status"`
	Input       json.RawMessage `json:"input"`
	// Result is set once the instance has completed.
	Result json.RawMessage `json:"result,omitempty"`
	// Failure is set once the instance has failed, was canceled or
	// terminated.
	Failure *engine.Failure `json:"failure,omitempty"`
	// CustomStatus is the status text the orchestration set last.
	CustomStatus string `json:"customStatus,omitempty"`
	// ParentID is the instance that started this one, if any.
	ParentID  string    `json:"parentId,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when the instance last changed; once it has finished,
	// when it finished.
	UpdatedAt time.Time `json:"updatedAt"`
}

// InstanceSummary is an instance as lists show it: without its input,
// result and failure, which GET /v1/instances/{id} has.
type InstanceSummary struct {
	ID           string        `json:"id"`
	Name         string        `json:"name"`
	ModuleHash   string        `json:"moduleHash"`
	ExecutionID  int64         `json:"executionId"`
	Status       engine.Status `json:"status"`
	CustomStatus string        `json:"customStatus,omitempty"`
	ParentID     string        `json:"parentId,omitempty"`
	CreatedAt    time.Time     `json:"createdAt"`
	UpdatedAt    time.Time     `json:"updatedAt"`
}

// InstanceDetails is the answer to GET /v1/instances/{id}: the instance,
// its executions and its children.
type InstanceDetails struct {
	Instance
	// Executions are the instance's executions whose history is kept,
	// oldest first; the current one is last.
	Executions []Execution `json:"executions"`
	// Children are the instances it started (children and detached),
	// newest first, up to 100.
	Children []InstanceSummary `json:"children"`
	// ChildrenNext, when set, lists the rest: GET
	// /v1/instances?parent={id}&cursor={ChildrenNext}.
	ChildrenNext string `json:"childrenNext,omitempty"`
	// Attributes are the search attributes its orchestration set
	// (ctx.SetAttributes), by name; absent when none.
	Attributes []Attribute `json:"attributes,omitempty"`
	// Activities are the activity calls it waits on, oldest first, up
	// to 100: tasks waiting for a worker or running.
	Activities []PendingActivity `json:"activities,omitempty"`
	// WaitingOn is what else it waits on, as its last turn left it, in the
	// order it began each (up to 100): timers (with the time each is due),
	// events, children, and updates whose handlers have not answered (an
	// update of no name: it waits on nothing but an update); absent once
	// it has finished, and until the first turn of an execution.
	WaitingOn []engine.Wait `json:"waitingOn,omitempty"`
	// LastProgress, while it has not finished, is when a turn last
	// changed it (its UpdatedAt): GET /v1/instances?stalledFor= selects
	// on it.
	LastProgress *time.Time `json:"lastProgress,omitempty"`
	// Warnings say what about the instance needs its owner's attention,
	// such as a history past the host's warning length, a module the host
	// cannot run (the instance then waits for a host that can), or a stored
	// input or result that is not JSON (a damaged or edited database),
	// shown as a JSON string of its bytes; absent when nothing does.
	Warnings []string `json:"warnings,omitempty"`
}

// Execution is one execution of an instance (an instance that continued
// as new has several).
type Execution struct {
	// ID numbers the executions of an instance from 1.
	ID int64 `json:"id"`
	// Events is the length of its history.
	Events int64 `json:"events"`
	// StartedAt is the time of its first event; absent if it has not begun.
	StartedAt *time.Time `json:"startedAt,omitempty"`
	// EndedAt is the time of the event that ended it, and End that event's
	// kind; absent while it runs.
	EndedAt *time.Time       `json:"endedAt,omitempty"`
	End     engine.EventKind `json:"end,omitempty"`
}

// StartRequest is the body of POST /v1/instances.
type StartRequest struct {
	// Name is the orchestration to start. Required.
	Name string `json:"name"`
	// Input is the orchestration's input. Empty means JSON null.
	Input json.RawMessage `json:"input,omitempty"`
	// ID is the new instance's id. Empty means the host picks one.
	ID string `json:"id,omitempty"`
	// Module is the module to start it on: a hash or a unique prefix of
	// one, which must register Name. Empty means the newest module that
	// registers Name.
	Module string `json:"module,omitempty"`
	// Raise, when set, is signal with start: the event is raised at the
	// instance ID (which the request must give) in the same transaction
	// that starts it or, when instance ID exists already, only raised at
	// it, as POST /v1/instances/{id}/events does.
	Raise *RaiseRequest `json:"raise,omitempty"`
	// Update, when set, is update with start: the update is sent to the
	// instance ID (which the request must give) in the same transaction
	// that starts it or, when instance ID exists already, only sent to it,
	// as POST /v1/instances/{id}/updates/{name} does; the answer is the
	// Update, as that route's is. Not with Raise.
	Update *UpdateRequest `json:"update,omitempty"`
}

// RaiseRequest is the body of POST /v1/instances/{id}/events, answered with
// 202 Accepted and the request as the host took it.
type RaiseRequest struct {
	// Name is the event's name. Required.
	Name string `json:"name"`
	// Data is the event's data. Empty means JSON null.
	Data json.RawMessage `json:"data,omitempty"`
	// Persistent raises a persistent event (kept until a persistent wait
	// takes it) rather than a positional one.
	Persistent bool `json:"persistent,omitempty"`
}

// QueryRequest is the (optional) body of POST
// /v1/instances/{id}/queries/{name}, answered with 200 OK and a
// QueryResponse; GET takes the argument in the parameter data instead.
type QueryRequest struct {
	// Data is the query's argument. Empty means JSON null.
	Data json.RawMessage `json:"data,omitempty"`
}

// QueryResponse is the answer to a query: its handler's result.
type QueryResponse struct {
	Result json.RawMessage `json:"result"`
}

// CancelRequest is the (optional) body of POST /v1/instances/{id}/cancel
// and POST /v1/instances/{id}/terminate, answered with 202 Accepted and
// the request as the host took it.
type CancelRequest struct {
	// Reason says why, for the orchestration and its history.
	Reason string `json:"reason,omitempty"`
}

// UpdateRequest is the body of POST /v1/instances/{id}/updates/{name},
// which answers with the Update once it is answered (200 OK) or, when the
// wait runs out first, as it stands (202 Accepted): ask for it again with
// GET /v1/instances/{id}/updates/{name}/{updateId}. In a start (StartRequest.Update)
// it is update with start.
type UpdateRequest struct {
	// Name is the update's name: the route's {name}, which it takes when
	// empty; required in a start.
	Name string `json:"name,omitempty"`
	// Data is the handler's argument. Empty means JSON null.
	Data json.RawMessage `json:"data,omitempty"`
	// ID is the update's id, unique in the instance: a request again with
	// an id the instance has had gets that update's answer, and runs
	// nothing again (so a caller that retries gives each update an id of
	// its own). Empty means the host picks one.
	ID string `json:"id,omitempty"`
}

// Update is an update of an instance and what became of it.
type Update struct {
	InstanceID string `json:"instanceId"`
	ID         string `json:"id"`
	Name       string `json:"name"`
	// State is Requested (not yet delivered), Accepted (its handler
	// runs), or, answered: Completed (Result is the handler's answer),
	// Failed (Failure is its error, or why the instance never answered)
	// or Refused (by the orchestration's validator, or for want of a
	// handler of its name; nothing of it is in history).
	State   string          `json:"state"`
	Input   json.RawMessage `json:"input,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Failure *engine.Failure `json:"failure,omitempty"`
	// Started, for update with start, says whether the instance was
	// started (201 Created) or was there already (200 OK).
	Started     *bool     `json:"started,omitempty"`
	RequestedAt time.Time `json:"requestedAt"`
	AnsweredAt  time.Time `json:"answeredAt,omitzero"`
}

// Answered reports whether the update has its answer (Completed, Failed
// or Refused).
func (u *Update) Answered() bool {
	return u.State == "Completed" || u.State == "Failed" || u.State == "Refused"
}

// Handlers is the answer to GET /v1/instances/{id}/handlers: the names of
// the queries and the updates the instance's orchestration registered so
// far, sorted.
type Handlers struct {
	Queries []string `json:"queries"`
	Updates []string `json:"updates"`
}

// StartResponse is the answer to POST /v1/instances.
type StartResponse struct {
	ID string `json:"id"`
	// Started, for a start with an event (StartRequest.Raise), says
	// whether the instance was started (true, 201 Created) or was there
	// already and only got the event (false, 200 OK); absent otherwise.
	Started *bool `json:"started,omitempty"`
}

// PurgeResponse is the answer to DELETE /v1/instances/{id}: the id of the
// instance purged.
type PurgeResponse struct {
	ID string `json:"id"`
}

// PurgedResponse is the answer to DELETE /v1/instances: how many finished
// instances the filter selected and were purged (with dryRun, would be).
type PurgedResponse struct {
	Purged int  `json:"purged"`
	DryRun bool `json:"dryRun,omitempty"`
}

// RemovedResponse is the answer to DELETE /v1/modules/{hash}: the full
// hash of the module removed.
type RemovedResponse struct {
	Hash string `json:"hash"`
}

// ModulesResponse is the answer to GET /v1/modules, newest first.
type ModulesResponse struct {
	Modules []Module `json:"modules"`
}

// InstancesResponse is the answer to GET /v1/instances: a page of
// instances, newest first.
type InstancesResponse struct {
	Instances []InstanceSummary `json:"instances"`
	// Next, when set, is the cursor of the next page (?cursor=Next).
	Next string `json:"next,omitempty"`
}

// HistoryResponse is the answer to GET /v1/instances/{id}/history: the
// history of one of the instance's executions, oldest first.
type HistoryResponse struct {
	Events []engine.Event `json:"events"`
}

// QueueResponse is the answer to GET /v1/queue: the work waiting now.
type QueueResponse struct {
	// Ready counts the messages ready for a turn (raised events, results,
	// timers come due, starts), for ReadyInstances instances; Starts counts
	// the new instances among them.
	Ready          int `json:"ready"`
	ReadyInstances int `json:"readyInstances"`
	Starts         int `json:"starts"`
	// OldestReady is the ready message that has waited longest.
	OldestReady *WaitingItem `json:"oldestReady,omitempty"`
	// Timers counts the timers not yet due of the instances that have
	// not finished; NextTimer is when the first comes due.
	Timers    int        `json:"timers"`
	NextTimer *time.Time `json:"nextTimer,omitempty"`
	// Running counts the instances running a turn.
	Running int `json:"running"`
	// Activities counts the activity tasks waiting for a worker,
	// ActivitiesRunning those running.
	Activities        int `json:"activities"`
	ActivitiesRunning int `json:"activitiesRunning"`
	// OldestActivity is the waiting activity task that has waited longest.
	OldestActivity *WaitingItem `json:"oldestActivity,omitempty"`
	// TaskQueues describes the task queues of workers outside the host
	// that hold tasks or that a worker polled through this host, by name.
	TaskQueues []TaskQueue `json:"taskQueues,omitempty"`
}

// WaitingItem is a message or an activity task that waits.
type WaitingItem struct {
	InstanceID string `json:"instanceId"`
	// What is the message's event kind, or the activity's name.
	What string `json:"what"`
	// Since is when it became ready.
	Since time.Time `json:"since"`
}

// AccessResponse is the answer to GET /v1/access: what the request's
// token may do.
type AccessResponse struct {
	// Access is "admin" (everything) or "read" (GET only).
	Access string `json:"access"`
	// TokenRequired says whether the host asks for a token; without one,
	// everyone is "admin".
	TokenRequired bool `json:"tokenRequired"`
	// Token is the name of the request's token ("anonymous" on a host
	// that asks for none), as the audit log and histories name it; empty
	// when the request carried no token the host accepts.
	Token string `json:"token,omitempty"`
}

// HealthResponse is the answer to GET /healthz (status "ok": the process
// answers) and to GET /readyz when the host is ready (status "ready").
// A host that is not ready answers 503 with an ErrorResponse that says
// why.
type HealthResponse struct {
	Status string `json:"status"`
}

// ErrorResponse is the body of every answer with a 4xx or 5xx status.
type ErrorResponse struct {
	Error string `json:"error"`
}

// Attribute is one search attribute of an instance.
type Attribute struct {
	Name string `json:"name"`
	// Type is string, int, float, bool, time or keywords.
	Type abi.AttributeType `json:"type"`
	// Value is a string, a number, true or false, a time (RFC 3339) or a
	// list of strings, as Type says.
	Value any `json:"value"`
}

// Attributes returns the wire form of search attributes.
func Attributes(attrs []abi.Attribute) []Attribute {
	out := make([]Attribute, 0, len(attrs))
	for _, a := range attrs {
		w := Attribute{Name: a.Name, Type: a.Type}
		switch a.Type {
		case abi.AttributeString:
			w.Value = a.String
		case abi.AttributeInt:
			w.Value = a.Int
		case abi.AttributeFloat:
			w.Value = a.Float
		case abi.AttributeBool:
			w.Value = a.Bool
		case abi.AttributeTime:
			w.Value = a.Time
		case abi.AttributeKeywords:
			w.Value = a.Keywords
		}
		out = append(out, w)
	}
	return out
}
