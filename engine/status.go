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
	// StatusContinuedAsNew: the execution ended by continuing as new; the
	// instance goes on in its next execution. Only a TurnResult reports it.
	StatusContinuedAsNew Status = "ContinuedAsNew"
)

// IsTerminal reports whether the status is final.
func (s Status) IsTerminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCanceled
}

// ends reports whether an execution with this status is over.
func (s Status) ends() bool { return s.IsTerminal() || s == StatusContinuedAsNew }
