package api

import (
	"errors"
	"testing"
)

func TestPickModule(t *testing.T) {
	t.Parallel()
	hashes := []string{"9f72cbb040f5aa", "9f31000000bbbb", "2b1f08c3aa1000"}
	tests := []struct {
		ref    string
		want   string
		wantIs error
		msg    string
	}{
		{ref: "9f72cbb040f5aa", want: "9f72cbb040f5aa"},
		{ref: "9f7", want: "9f72cbb040f5aa"},
		{ref: "9F7", want: "9f72cbb040f5aa"},
		{ref: "2b", want: "2b1f08c3aa1000"},
		{ref: "9f", wantIs: ErrBadInput, msg: `host: bad input: 2 deployed modules' hashes start with "9f" (9f72cbb040f5, 9f31000000bb); give more of the hash`},
		{ref: "77", wantIs: ErrModuleNotFound, msg: `host: module not found: no deployed module's hash is or starts with "77" (durabox deploy prints a module's hash)`},
		{ref: "", wantIs: ErrModuleNotFound, msg: `host: module not found: no deployed module's hash is or starts with "" (durabox deploy prints a module's hash)`},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			got, err := PickModule(hashes, tt.ref)
			if tt.wantIs != nil {
				if !errors.Is(err, tt.wantIs) || err.Error() != tt.msg {
					t.Fatalf("err = %v\nwant %s", err, tt.msg)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}
