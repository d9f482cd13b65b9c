package host

import "testing"

// closed reports whether c is closed.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestChangesWakeOnlyTheirInstance: a change of one instance wakes the
// goroutines watching it, not those watching another, and watchers that
// stop leave nothing behind.
func TestChangesWakeOnlyTheirInstance(t *testing.T) {
	t.Parallel()
	c := newChanges()
	a1, stopA1 := c.watch("a")
	a2, stopA2 := c.watch("a")
	b, stopB := c.watch("b")
	c.notify("a")
	if !closed(a1) || !closed(a2) {
		t.Fatal("a change of a did not wake both of its watchers")
	}
	if closed(b) {
		t.Fatal("a change of a woke the watcher of b")
	}
	again, stopAgain := c.watch("a")
	if closed(again) {
		t.Fatal("a watch that began after a's change was woken by it")
	}
	stopA1()
	stopA2()
	if _, ok := c.ids["a"]; !ok {
		t.Fatal("watchers woken by an earlier change, stopping, dropped the watch that began after it")
	}
	c.notify("nobody watches this")
	stopAgain()
	stopB()
	if len(c.ids) != 0 {
		t.Fatalf("every watcher stopped, yet %d instances are still watched", len(c.ids))
	}
}
