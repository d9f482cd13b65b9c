package engine

// Status is where an instance stands.
type Status string

// The statuses of an instance.
const (
	// StatusPending: created, its first turn has not run yet.
	StatusPending Status = "Pending"
	// StatusRunning: started and waiting for work or events.
	StatusRunning Status = "Running"
	// StatusCompleted: finished with a result.
	StatusCompleted Status = "Completed"
	// StatusFailed: finished with a failure.
	StatusFailed Status = "Failed"
	// StatusCanceled: finished by failing after its cancellation was
	// requested.
	StatusCanceled Status = "Canceled"
	// StatusTerminated: ended from outside, without the orchestration's
	// cooperation (an OrchestrationTerminated message).
	StatusTerminated Status = "Terminated"
	// StatusContinuedAsNew: the execution ended by continuing as new; the
	// instance goes on in its next execution. Only a TurnResult reports it.
	StatusContinuedAsNew Status = "ContinuedAsNew"
)

// Statuses returns the statuses an instance can have, in the order of its
// life (StatusContinuedAsNew is an execution's, never an instance's).
func Statuses() []Status {
	return []Status{StatusPending, StatusRunning, StatusCompleted, StatusFailed, StatusCanceled, StatusTerminated}
}

// TerminalStatuses returns the final statuses, those IsTerminal reports.
func TerminalStatuses() []Status {
	return []Status{StatusCompleted, StatusFailed, StatusCanceled, StatusTerminated}
}

// IsTerminal reports whether the status is final.
func (s Status) IsTerminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCanceled || s == StatusTerminated
}

// ends reports whether an execution with this status is over.
func (s Status) ends() bool { return s.IsTerminal() || s == StatusContinuedAsNew }
