package sqlite

import (
	"testing"

	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		s, _ := openTest(t)
		return s
	})
}
