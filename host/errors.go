package host

import (
	"fmt"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
)

// notFound is ErrNotFound for the instance id, which it quotes cut short
// (an id in a request may be of any length).
func notFound(id string) error { return fmt.Errorf("%w: %s", api.ErrNotFound, abi.Quote(id)) }
