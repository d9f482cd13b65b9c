package durabox

import "errors"

// Error is an error with a type: a name, chosen by the code that fails,
// that says what kind of failure it is ("CardDeclined", "NotFound"). An
// activity that returns one reports its type with its failure: a retry
// policy's NonRetryableErrors lists the types not worth another attempt,
// and the orchestration reads it in *ActivityError's Type.
type Error struct {
	// Type is the error's type: 1 to 256 bytes of UTF-8 without control
	// characters.
	Type string
	// Message is the error's text.
	Message string
}

func (e *Error) Error() string { return e.Message }

// NewError returns an error of type errType with message: an activity
// returns it, as is or wrapped, to name the kind of its failure.
//
//	if declined {
//		return "", durabox.NewError("CardDeclined", "the bank declined the card")
//	}
func NewError(errType, message string) error { return &Error{Type: errType, Message: message} }

// ErrorType returns the type of the first *Error in err's chain, or "".
func ErrorType(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Type
	}
	return ""
}
