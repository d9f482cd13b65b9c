package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/durabox/durabox/store"
)

// noteUnwritable notes a write that the disk refused, for want of space
// (store.ErrFull) or with an I/O error (store.ErrDiskFailed), whether the
// host's own or one the store refused a fetch for because another write
// had found the disk so: until the store can write again (writableAgain),
// the fetchers take no work.
// Taking it would count a delivery of each turn (a lease, which may still
// fit in the room the WAL has, or need no sync), whose commit would fail
// again, and a disk that refused writes for PoisonAfter deliveries would
// fail turns as poison, which they are not.
func (h *Host) noteUnwritable(err error) {
	if errors.Is(err, store.ErrFull) || errors.Is(err, store.ErrDiskFailed) {
		h.unwritable.Store(true)
	}
}

// writableAgain returns nil unless the disk refused a write and the
// store's Ping says it still does; the fetchers then wait (fetchRetry)
// and ask again.
func (h *Host) writableAgain(ctx context.Context) error {
	if !h.unwritable.Load() {
		return nil
	}
	if err := h.st.Ping(ctx); err != nil {
		return fmt.Errorf("host: waiting for the disk to take writes again: %w", err)
	}
	h.unwritable.Store(false)
	return nil
}
