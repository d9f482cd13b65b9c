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
	r := &HTTPRequest{}
	err := decodeFields(b, "HTTPRequest", func(field, _ uint64, raw []byte) error {
		switch field {
		case 1:
			r.Method = string(raw)
		case 2:
			r.URL = string(raw)
		case 3:
			r.Header = append(r.Header, string(raw))
		case 4:
			r.Body = clone(raw)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
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
	r := &HTTPResponse{}
	err := decodeFields(b, "HTTPResponse", func(field, v uint64, raw []byte) error {
		switch field {
		case 1:
			r.Status = int(v)
		case 2:
			r.Header = append(r.Header, string(raw))
		case 3:
			r.Body = clone(raw)
		case 4:
			r.Error = string(raw)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}
