package host

import "testing"

func TestHTTPAllowList(t *testing.T) {
	const rest = ", which is not a host name (example.com) or a host:port (example.com:8080); leave out the scheme and the path"
	tests := []struct {
		name    string
		hosts   []string
		wantErr string
	}{
		{"host names and host:ports", []string{"example.com", "API.example.com:8443", "127.0.0.1:8080", "[::1]:80"}, ""},
		{"a scheme", []string{"example.com", "https://example.com"}, `host: HTTPAllowList has "https://example.com"` + rest},
		{"a path", []string{"example.com/api"}, `host: HTTPAllowList has "example.com/api"` + rest},
		{"credentials", []string{"me@example.com"}, `host: HTTPAllowList has "me@example.com"` + rest},
		{"a space", []string{"example .com"}, `host: HTTPAllowList has "example .com"` + rest},
		{"empty", []string{""}, `host: HTTPAllowList has ""` + rest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{HTTPAllowList: tt.hosts}
			err := o.validate()
			if got := errText(err); got != tt.wantErr {
				t.Fatalf("validate: %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRuntimeOption(t *testing.T) {
	for _, tt := range []struct{ runtime, want, wantErr string }{
		{"", RuntimeWazero, ""},
		{"wazero", RuntimeWazero, ""},
		{"wasmtime", RuntimeWasmtime, ""},
		{"v8", "v8", `host: the runtime is "v8"; it must be "wazero" or "wasmtime"`},
	} {
		o := Options{Runtime: tt.runtime}
		if err := o.validate(); errText(err) != tt.wantErr || o.Runtime != tt.want {
			t.Errorf("Runtime %q: validate gave %q and Runtime %q; want %q and %q", tt.runtime, errText(err), o.Runtime, tt.wantErr, tt.want)
		}
	}
}
