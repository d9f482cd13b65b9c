package abi

import (
	"strings"
	"testing"
)

func TestCheckInstanceID(t *testing.T) {
	t.Parallel()
	const rule = "; an instance id is 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit"
	for _, tt := range []struct {
		id, want string
	}{
		{"order-7", ""},
		{"a", ""},
		{"0.a_b:c-D", ""},
		{strings.Repeat("x", 128), ""},
		{"", "abi: the instance id is empty" + rule},
		{strings.Repeat("x", 129), `abi: instance id "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"… is 129 bytes long` + rule},
		{"-a", `abi: instance id "-a" starts with '-'` + rule},
		{"~a", `abi: instance id "~a" starts with '~'` + rule},
		{"order-7~1:2", `abi: instance id "order-7~1:2" has '~', which only ids the host derives have` + rule},
		{"a b", `abi: instance id "a b" has ' '` + rule},
		{"a/b", `abi: instance id "a/b" has '/'` + rule},
		{"a\x00", `abi: instance id "a\x00" has '\x00'` + rule},
		{"aé", `abi: instance id "aé" has 'é'` + rule},
		{"a\xff", `abi: instance id "a\xff" has bytes that are not UTF-8` + rule},
	} {
		err := CheckInstanceID(tt.id)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckInstanceID(%q) = %s\nwant %s", tt.id, got, tt.want)
		}
	}
}
