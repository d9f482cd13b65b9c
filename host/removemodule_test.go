package host_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/durabox/durabox/host"
)

// withCustomSection returns wasm with a custom section named name
// appended: the same module, with another hash.
func withCustomSection(wasm []byte, name string) []byte {
	// Names of fewer than 127 bytes: each length is one byte of LEB128.
	// The content is one byte: wazero reads none as cut short.
	section := append(append([]byte{byte(len(name))}, name...), 0)
	return append(append(wasm[:len(wasm):len(wasm)], 0, byte(len(section))), section...)
}

// TestRemoveModuleByPrefix removes modules over HTTP by the short hash
// every listing shows and by any unique prefix, in either case, as the
// command line takes them; an ambiguous prefix is refused naming the
// modules it could be, and one that names none is a 404.
func TestRemoveModuleByPrefix(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	first := h.deploy(t, "examples/wasm/hello")
	wasm := wasmOf(t, "examples/wasm/hello")
	// Another module whose hash begins with the same digit.
	var second []byte
	for i := 0; second == nil; i++ {
		m := withCustomSection(wasm, "variant"+strings.Repeat("x", i%100)+string(rune('a'+i/100)))
		if sum := sha256.Sum256(m); hex.EncodeToString(sum[:])[0] == first.Hash[0] {
			second = m
		}
	}
	info, err := h.Deploy(t.Context(), second)
	if err != nil {
		t.Fatal(err)
	}
	srv := serveAPI(t, h, nil)

	for _, w := range []webRequest{
		{name: "an ambiguous prefix", method: "DELETE", path: "/v1/modules/" + first.Hash[:1], wantStatus: 400,
			want: `2 deployed modules' hashes start with "` + first.Hash[:1] + `"`},
		{name: "a prefix of none", method: "DELETE", path: "/v1/modules/" + strings.Repeat("0", 64), wantStatus: 404,
			want: `module not found: no deployed module's hash is or starts with "` + strings.Repeat("0", 64) + `"`},
		{name: "the short hash", method: "DELETE", path: "/v1/modules/" + first.Hash[:12], wantStatus: 200,
			want: `{"hash":"` + first.Hash + `"}`},
		{name: "a prefix in capitals", method: "DELETE", path: "/v1/modules/" + strings.ToUpper(info.Hash[:8]), wantStatus: 200,
			want: `{"hash":"` + info.Hash + `"}`},
	} {
		status, body := w.send(t, srv.URL)
		w.check(t, status, body)
		if w.name == "an ambiguous prefix" {
			for _, hash := range []string{first.Hash, info.Hash} {
				if !strings.Contains(body, hash[:12]) {
					t.Errorf("the refusal of an ambiguous prefix, %s, does not name %s", body, hash[:12])
				}
			}
		}
	}
	mods, err := h.Modules(t.Context())
	if err != nil || len(mods) != 0 {
		t.Errorf("modules left: %v, %v; want none", moduleHashes(mods), err)
	}
}
