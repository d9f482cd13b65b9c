// Package spec describes every message of the ABI once: each field's
// number, name, type and meaning. The codec (abi/codec_gen.go) and the
// field tables of abi/ABI.md are generated from it, and a test holds both
// to it: after a change here, run
//
//	cd abi && go test ./internal/spec -update
//
// A hand-written codec and a hand-written document would each be a second
// description that could drift from the first (RATIONALE.md, "Why is the
// ABI's codec generated from a table?").
package spec

// Kind is how a field travels on the wire and which Go type holds it.
type Kind int

// The kinds of field.
const (
	// Uint is an unsigned varint, held in Field.GoType (uint64 if empty).
	Uint Kind = iota
	// Sint is a zigzag varint, held in an int64.
	Sint
	// Bool is a varint 1 when true, omitted when false.
	Bool
	// Flag is a varint 1 or 0, always written.
	Flag
	// String is UTF-8 bytes, held in a string.
	String
	// Bytes are bytes, held in a []byte (copied when decoded, never
	// aliasing the buffer they came from).
	Bytes
	// Nested is a nested message, held in a pointer (written when not
	// nil), of the type Field.GoType.
	Nested
	// RepeatedString is a String repeated, held in a []string.
	RepeatedString
	// RepeatedNested is a Nested message repeated, held in a slice of
	// Field.GoType.
	RepeatedNested
)

// Field is one field of a message.
type Field struct {
	Num int
	// Name is the field's name in ABI.md; Go is its Go field's name.
	Name, Go string
	Kind     Kind
	// GoType is the Go type of a Uint (a conversion from and to uint64) and
	// the message type of a Nested or RepeatedNested.
	GoType string
	// Enum, for a Uint that holds a kind, names its values from 1 in
	// order: the constants GoType+Enum[i] (JobStart = 1, …) must agree.
	Enum []string
	// Doc is what ABI.md says of the field after its type.
	Doc string
}

// Message is one message type.
type Message struct {
	// Name is its Go type and its heading in ABI.md.
	Name   string
	Fields []Field
	// Public generates EncodeName and DecodeName; the others are
	// nested, or have exported functions of their own in abi/codec.go.
	Public bool
}

// Messages lists every message of the ABI, in the order ABI.md gives
// them.
var Messages = []Message{
	{Name: "Activation", Fields: []Field{
		{Num: 1, Name: "time", Go: "Time", Kind: Sint, Doc: "Unix nanoseconds, the logical time"},
		{Num: 2, Name: "replaying", Go: "Replaying", Kind: Flag, Doc: "1 if replaying, 0 if not; always present"},
		{Num: 3, Name: "jobs", Go: "Jobs", Kind: RepeatedNested, GoType: "Job"},
		{Num: 4, Name: "history_length", Go: "HistoryLength", Kind: Uint, Doc: "the number of events of the execution's history the orchestration has applied, this activation's included: the same on every replay of the step as when it first ran (see \"History awareness\")"},
		{Num: 5, Name: "history_size", Go: "HistorySize", Kind: Uint, Doc: "the bytes of payload (names, inputs, results, failures, texts) those events carry"},
		{Num: 6, Name: "continue_as_new_suggested", Go: "ContinueAsNewSuggested", Kind: Bool, Doc: "1 once `history_length` is past the host's history warning, as it stood when the execution started"},
	}},
	{Name: "Job", Fields: []Field{
		{Num: 1, Name: "kind", Go: "Kind", Kind: Uint, GoType: "JobKind",
			Enum: []string{"Start", "ResolveActivity", "FireTimer", "ResolveEvent", "ResolveChild", "Cancel", "ResolveRaise", "Update"}},
		{Num: 2, Name: "seq", Go: "Seq", Kind: Uint, Doc: "the command this job resolves (not Start)"},
		{Num: 3, Name: "name", Go: "Name", Kind: String, Doc: "orchestration name (Start); the reason (Cancel); the update's name (Update)"},
		{Num: 4, Name: "instance_id", Go: "InstanceID", Kind: String, Doc: "(Start)"},
		{Num: 5, Name: "input", Go: "Input", Kind: Bytes, Doc: "JSON (Start; the update's argument for Update)"},
		{Num: 6, Name: "result", Go: "Result", Kind: Bytes, Doc: "JSON (ResolveActivity, ResolveChild; the event's data for ResolveEvent; for Start, the result of the previous run of the schedule that started the instance, absent when none had finished or it failed)"},
		{Num: 7, Name: "failure", Go: "Failure", Kind: Nested, GoType: "Failure", Doc: "if present, the activity or child failed (ResolveActivity, ResolveChild), the event was not delivered, saying why (ResolveRaise), or the previous run of the schedule that started the instance failed (Start)"},
		{Num: 8, Name: "update_id", Go: "UpdateID", Kind: String, Doc: "the update's id, unique in the instance (Update)"},
		{Num: 9, Name: "attempts", Go: "Attempts", Kind: Uint, GoType: "uint32", Doc: "how many attempts the activity took, the last one included, when its call had a retry policy; " +
			"0 (or absent) when it had none (ResolveActivity)"},
	}},
	{Name: "ActivationResult", Fields: []Field{
		{Num: 1, Name: "commands", Go: "Commands", Kind: RepeatedNested, GoType: "Command"},
		{Num: 2, Name: "handles_updates", Go: "HandlesUpdates", Kind: Bool, Doc: "1 while the orchestration has an update handler registered and has not ended: an update can wake it, so the host does not fail it as waiting on nothing"},
	}},
	{Name: "Command", Fields: []Field{
		{Num: 1, Name: "kind", Go: "Kind", Kind: Uint, GoType: "CommandKind",
			Enum: []string{"ScheduleActivity", "StartTimer", "Complete", "Fail", "CancelTimer", "CancelActivity", "WaitEvent",
				"WaitEventPersistent", "CancelWait", "ContinueAsNew", "StartChild", "CancelChild", "SetCustomStatus", "Patch", "Raise", "CompleteUpdate", "RejectUpdate", "SetAttributes"}},
		{Num: 2, Name: "seq", Go: "Seq", Kind: Uint},
		{Num: 3, Name: "name", Go: "Name", Kind: String, Doc: "activity name (ScheduleActivity), event name (WaitEvent, WaitEventPersistent), " +
			"orchestration name (StartChild), the status text (SetCustomStatus), the change id (Patch), the event name (Raise)"},
		{Num: 4, Name: "input", Go: "Input", Kind: Bytes, Doc: "JSON (ScheduleActivity, StartChild; the event's data for Raise; for SetAttributes, the search attributes: see \"Search attributes\")"},
		{Num: 5, Name: "delay", Go: "Delay", Kind: Sint, Doc: "nanoseconds after the activation's time (StartTimer); a timer that would be due after " +
			"2262-04-11T23:47:16.854775807Z, where Unix nanoseconds overflow an int64, is due then"},
		{Num: 6, Name: "output", Go: "Output", Kind: Bytes, Doc: "JSON (Complete; the next execution's input for ContinueAsNew; the handler's answer for CompleteUpdate)"},
		{Num: 7, Name: "failure", Go: "Failure", Kind: Nested, GoType: "Failure", Doc: "(Fail); the handler's error (CompleteUpdate, when it failed); why the validator refused the update (RejectUpdate)"},
		{Num: 8, Name: "target", Go: "Target", Kind: Uint, Doc: "the `seq` of the command a cancel command cancels (CancelTimer, CancelActivity, CancelWait, CancelChild)"},
		{Num: 9, Name: "instance_id", Go: "InstanceID", Kind: String, Doc: "the child's instance id (StartChild), one a client could choose; " +
			"empty: the host derives `PARENT~EXECUTION:EVENT` (see \"Instance ids\"); the instance the event is for (Raise)"},
		{Num: 10, Name: "detached", Go: "Detached", Kind: Bool, Doc: "1 for a child nobody waits for (StartChild)"},
		{Num: 11, Name: "timeout", Go: "TimeoutMillis", Kind: Uint, Doc: "the deadline of each attempt of the activity, in milliseconds; " +
			"0 (or absent) leaves it to the host's `--activity-timeout` (ScheduleActivity)"},
		{Num: 12, Name: "persistent", Go: "Persistent", Kind: Bool, Doc: "1 for a persistent event (Raise)"},
		{Num: 13, Name: "update_id", Go: "UpdateID", Kind: String, Doc: "the id of the update the command answers (CompleteUpdate, RejectUpdate)"},
		{Num: 14, Name: "task_queue", Go: "TaskQueue", Kind: String, Doc: "the task queue of the activity's tasks: empty (or absent) runs it in the module, in the host; " +
			"a name gives it to the workers that serve that queue (ScheduleActivity)"},
		{Num: 15, Name: "heartbeat_timeout", Go: "HeartbeatTimeoutMillis", Kind: Uint, Doc: "milliseconds an attempt may go without a heartbeat before the host counts it as failed " +
			"and delivers the task again; 0 (or absent): no heartbeat is asked for (ScheduleActivity)"},
		{Num: 16, Name: "retry", Go: "Retry", Kind: Nested, GoType: "RetryPolicy", Doc: "if present, the host retries a failed attempt as the policy says, " +
			"and history records one outcome, after the last attempt; absent: one attempt (ScheduleActivity)"},
	}},
	{Name: "RetryPolicy", Fields: []Field{
		{Num: 1, Name: "maximum_attempts", Go: "MaximumAttempts", Kind: Uint, GoType: "uint32", Doc: "how many attempts at most, the first included; 0 (or absent) or 1: one"},
		{Num: 2, Name: "initial_interval", Go: "InitialIntervalMillis", Kind: Uint, Doc: "milliseconds between a failed first attempt and the second; 0 (or absent): at once"},
		{Num: 3, Name: "backoff_coefficient", Go: "BackoffThousandths", Kind: Uint, Doc: "what each interval multiplies the one before by, in thousandths: 2000 doubles it; " +
			"0 (or absent): 2000; otherwise at least 1000"},
		{Num: 4, Name: "maximum_interval", Go: "MaximumIntervalMillis", Kind: Uint, Doc: "milliseconds no interval exceeds; 0 (or absent): no cap"},
		{Num: 5, Name: "non_retryable", Go: "NonRetryable", Kind: RepeatedString, Doc: "error types (Failure `type`) that end the call at the first failure, retries left or not"},
	}},
	{Name: "Failure", Fields: []Field{
		{Num: 1, Name: "message", Go: "Message", Kind: String},
		{Num: 2, Name: "details", Go: "Details", Kind: String, Doc: "e.g. a stack trace"},
		{Num: 3, Name: "type", Go: "Type", Kind: String, Doc: "the error's type, a name the failing code chose (an activity's failure, for a retry policy's `non_retryable`); empty (or absent): none"},
	}},
	{Name: "Manifest", Public: true, Fields: []Field{
		{Num: 1, Name: "sdk", Go: "SDK", Kind: String, Doc: "SDK name and version, for diagnostics"},
		{Num: 2, Name: "orchestrations", Go: "Orchestrations", Kind: RepeatedString},
		{Num: 3, Name: "activities", Go: "Activities", Kind: RepeatedString},
		{Num: 4, Name: "updates", Go: "Updates", Kind: Bool, Doc: "1 when the module delivers updates (Update jobs) to its orchestrations' handlers, and refuses those it has none for; a host refuses updates to the instances of a module without it"},
	}},
	{Name: "ActivityRequest", Public: true, Fields: []Field{
		{Num: 1, Name: "name", Go: "Name", Kind: String},
		{Num: 2, Name: "input", Go: "Input", Kind: Bytes, Doc: "JSON"},
		{Num: 3, Name: "instance_id", Go: "InstanceID", Kind: String, Doc: "the calling orchestration instance"},
		{Num: 4, Name: "attempt", Go: "Attempt", Kind: Uint, GoType: "uint32", Doc: "1 for the first; one more for each retry the call's policy made and each delivery again after a crash or a lost lease"},
		{Num: 5, Name: "heartbeat", Go: "Heartbeat", Kind: Bytes, Doc: "JSON, the details of the last heartbeat an earlier attempt of this call sent, if any"},
		{Num: 6, Name: "completion_token", Go: "CompletionToken", Kind: String, Doc: "the token that completes this attempt from outside, once it answers `pending`: whoever holds it completes or fails the call (POST /v1/tasks/{token}/complete or fail) before the attempt's deadline"},
	}},
	{Name: "ActivityResult", Public: true, Fields: []Field{
		{Num: 1, Name: "output", Go: "Output", Kind: Bytes, Doc: "JSON"},
		{Num: 2, Name: "failure", Go: "Failure", Kind: Nested, GoType: "Failure", Doc: "if present, the attempt failed"},
		{Num: 3, Name: "pending", Go: "Pending", Kind: Bool, Doc: "1 when the attempt's outcome comes from outside, by its request's `completion_token`, before its deadline (output and failure are then absent)"},
	}},
	{Name: "QueryRequest", Public: true, Fields: []Field{
		{Num: 1, Name: "name", Go: "Name", Kind: String, Doc: "the query's name"},
		{Num: 2, Name: "input", Go: "Input", Kind: Bytes, Doc: "JSON, the query's argument"},
	}},
	{Name: "QueryResult", Public: true, Fields: []Field{
		{Num: 1, Name: "output", Go: "Output", Kind: Bytes, Doc: "JSON, the handler's answer"},
		{Num: 2, Name: "failure", Go: "Failure", Kind: Nested, GoType: "Failure", Doc: "if present, the query failed: its handler returned an error, panicked or tried to change the instance, or there is none of that name"},
		{Num: 3, Name: "handlers", Go: "Handlers", Kind: RepeatedString, Doc: "the names of the queries the instance handles, sorted"},
		{Num: 4, Name: "update_handlers", Go: "UpdateHandlers", Kind: RepeatedString, Doc: "the names of the updates the instance handles, sorted"},
	}},
	{Name: "HTTPRequest", Public: true, Fields: []Field{
		{Num: 1, Name: "method", Go: "Method", Kind: String},
		{Num: 2, Name: "url", Go: "URL", Kind: String},
		{Num: 3, Name: "header", Go: "Header", Kind: RepeatedString, Doc: "`Key: value`"},
		{Num: 4, Name: "body", Go: "Body", Kind: Bytes},
	}},
	{Name: "HTTPResponse", Public: true, Fields: []Field{
		{Num: 1, Name: "status", Go: "Status", Kind: Uint, GoType: "int"},
		{Num: 2, Name: "header", Go: "Header", Kind: RepeatedString, Doc: "`Key: value`"},
		{Num: 3, Name: "body", Go: "Body", Kind: Bytes},
		{Num: 4, Name: "error", Go: "Error", Kind: String, Doc: "set when there is no response, saying why"},
	}},
}
