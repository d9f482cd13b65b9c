// Package size words sizes and the payload limit in messages, the same
// way wherever the host or its server refuses something for its size.
package size

import "fmt"

// PayloadLimit says what a payload limit is and where it is set.
func PayloadLimit(limit int) string {
	return fmt.Sprintf("the limit of %s a payload (Options.MaxPayload; durabox serve --max-payload-mib)", MiB(limit))
}

// MiB formats a size: in MiB when it is a whole number of them, else in
// bytes.
func MiB(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
