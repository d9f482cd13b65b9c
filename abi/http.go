package abi

// The host's own imports (module "durabox"). Guests reach the network only
// through the host: activities call the HTTP imports, and the host performs
// the request if its allow-list permits; orchestrations ask about patches.
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

// EncodeHTTPRequest encodes r.
func EncodeHTTPRequest(r *HTTPRequest) []byte {
	var e encoder
	e.string(1, r.Method)
	e.string(2, r.URL)
	for _, h := range r.Header {
		e.string(3, h)
	}
	e.bytes(4, r.Body)
	return e.buf
}

// DecodeHTTPRequest decodes an HTTPRequest.
func DecodeHTTPRequest(b []byte) (*HTTPRequest, error) {
	req := &HTTPRequest{}
	r := readFields(b, "HTTPRequest")
	for r.next() {
		switch r.field {
		case 1:
			req.Method = string(r.raw)
		case 2:
			req.URL = string(r.raw)
		case 3:
			req.Header = append(req.Header, string(r.raw))
		case 4:
			req.Body = clone(r.raw)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return req, nil
}

// EncodeHTTPResponse encodes r.
func EncodeHTTPResponse(r *HTTPResponse) []byte {
	var e encoder
	e.uint(1, uint64(r.Status))
	for _, h := range r.Header {
		e.string(2, h)
	}
	e.bytes(3, r.Body)
	e.string(4, r.Error)
	return e.buf
}

// DecodeHTTPResponse decodes an HTTPResponse.
func DecodeHTTPResponse(b []byte) (*HTTPResponse, error) {
	res := &HTTPResponse{}
	r := readFields(b, "HTTPResponse")
	for r.next() {
		switch r.field {
		case 1:
			res.Status = int(r.v)
		case 2:
			res.Header = append(res.Header, string(r.raw))
		case 3:
			res.Body = clone(r.raw)
		case 4:
			res.Error = string(r.raw)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return res, nil
}
