package abi

// The host's own imports (module "durabox"). Guests reach the network only
// through the host: activities call the HTTP imports, and the host performs
// the request if its allow-list permits, and send heartbeats;
// orchestrations ask about patches.
// See ABI.md, "Imports".
const (
	// ImportModule is the module name of the host's own imports.
	ImportModule = "durabox"
	// ImportHTTPRequest takes the region (address i32, length i32) of an
	// encoded HTTPRequest, performs it, keeps the encoded HTTPResponse and
	// returns its length (i32).
	ImportHTTPRequest = "http_request"
	// ImportHTTPResponse copies the kept response to the address (i32) it
	// is given and returns 0, or non-zero if the address is out of range.
	ImportHTTPResponse = "http_response"
	// ImportPatched takes the region (address i32, length i32) of a change
	// id and returns 1 (i32) if the orchestration takes the change's new
	// code path in the step being applied (Activation.Patched), else 0.
	ImportPatched = "patched"
	// ImportHeartbeat takes the region (address i32, length i32) of an
	// activity's heartbeat details (JSON; length 0 for none), renews the
	// attempt's lease and keeps the details for the call's next attempt;
	// it returns 0 (i32) when taken, 1 when taken but the result is no
	// longer wanted (the attempt should stop), 2 when not taken.
	ImportHeartbeat = "heartbeat"
)

// HTTPRequest is an outbound HTTP request.
type HTTPRequest struct {
	Method string
	URL    string
	// Header lists "Key: value" lines.
	Header []string
	Body   []byte
}

// HTTPResponse is the answer to an HTTPRequest: a response, or Error when
// there was none (refused by the host, or failed).
type HTTPResponse struct {
	Status int
	// Header lists "Key: value" lines.
	Header []string
	Body   []byte
	Error  string
}
