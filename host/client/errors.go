package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/durabox/durabox/host/api"
)

// ErrPlainHTTP is returned by every request of a client given certificate
// authorities (Options.RootCAs) but an http:// address: it sends nothing,
// as its token and data would travel in clear.
var ErrPlainHTTP = errors.New("the client has certificate authorities for https (Options.RootCAs, --tls-ca)")

// Error is the host's refusal of a request: an answer with a 4xx or 5xx
// status. The package documentation lists the statuses.
type Error struct {
	// Op is what the client asked for, such as "start".
	Op string
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Message is the host's explanation.
	Message string
}

func (e *Error) Error() string { return "durabox: " + e.Op + ": " + e.Message }

// refusal turns an answer with an error status into an *Error. An answer
// without an ErrorResponse body (from something other than a Durabox host,
// or for a path the host does not serve) is shown as it came.
func refusal(op string, resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	var r api.ErrorResponse
	if json.Unmarshal(body, &r) == nil && r.Error != "" {
		return &Error{Op: op, StatusCode: resp.StatusCode, Message: r.Error}
	}
	msg := "the host answered " + resp.Status
	if text := strings.TrimSpace(string(body)); text != "" {
		msg += fmt.Sprintf(": %.200s", text)
	}
	return &Error{Op: op, StatusCode: resp.StatusCode, Message: msg}
}
