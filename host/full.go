package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/durabox/durabox/store"
)

// noteFull notes a write that failed for a full disk (store.ErrFull):
// until the store has space again (spaceAgain), the fetchers take no
// work. Taking it would count a delivery of each turn, whose commit would
// fail again, and a disk full for PoisonAfter deliveries would fail turns
// as poison, which they are not.
func (h *Host) noteFull(err error) {
	if errors.Is(err, store.ErrFull) {
		h.full.Store(true)
	}
}

// spaceAgain returns nil unless a write failed for a full disk and the
// store's Ping says it still is; the fetchers then wait (fetchRetry) and
// ask again.
func (h *Host) spaceAgain(ctx context.Context) error {
	if !h.full.Load() {
		return nil
	}
	if err := h.st.Ping(ctx); err != nil {
		return fmt.Errorf("host: waiting for space to write: %w", err)
	}
	h.full.Store(false)
	return nil
}
