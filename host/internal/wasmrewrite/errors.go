package wasmrewrite

import (
	"errors"
	"fmt"
)

// ErrUnsupported is returned, wrapped with the reason, when Rewrite refuses
// a module: the module is then compiled as is.
var ErrUnsupported = errors.New("no snapshot")

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnsupported}, args...)...)
}
