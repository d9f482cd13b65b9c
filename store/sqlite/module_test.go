package sqlite

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/store"
)

func TestModules(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	paris := time.FixedZone("Paris", 3600)
	for _, m := range []store.Module{
		{Hash: "h1", Wasm: []byte("one"), Orchestrations: []string{"A", "B"}, Activities: []string{"X"}, Env: []string{"K=1"}, DeployedAt: t0.In(paris)},
		{Hash: "h2", Wasm: []byte("two"), Orchestrations: []string{"A"}, DeployedAt: t0.Add(time.Minute)},
		{Hash: "h3", Wasm: []byte("three"), Orchestrations: []string{"C"}, DeployedAt: t0.Add(2 * time.Minute)},
	} {
		if err := s.PutModule(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	moduleFor := func(t *testing.T, want map[string]string) {
		t.Helper()
		for name, hash := range want {
			if got, err := s.ModuleFor(ctx, name); err != nil || got != hash {
				t.Errorf("ModuleFor(%s) = %q, %v; want %q", name, got, err, hash)
			}
		}
	}
	moduleFor(t, map[string]string{"A": "h2", "B": "h1", "C": "h3"})

	want := store.Module{Hash: "h1", Wasm: []byte("one"), Orchestrations: []string{"A", "B"}, Activities: []string{"X"}, Env: []string{"K=1"}, DeployedAt: t0}
	if m, err := s.GetModule(ctx, "h1"); err != nil || !reflect.DeepEqual(m, want) {
		t.Fatalf("GetModule(h1) = %+v, %v\nwant %+v", m, err, want)
	}

	// Deploying h1 again makes it the newest, with its new Env.
	if err := s.PutModule(ctx, store.Module{Hash: "h1", Wasm: []byte("one"), Orchestrations: []string{"A", "B"}, Activities: []string{"X"}, Env: []string{"K=2"}, DeployedAt: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	moduleFor(t, map[string]string{"A": "h1", "B": "h1", "C": "h3"})
	list, err := s.ListModules(ctx)
	wantList := []store.ModuleInfo{
		{Hash: "h1", Orchestrations: []string{"A", "B"}, Activities: []string{"X"}, Env: []string{"K=2"}, DeployedAt: t0.Add(time.Hour)},
		{Hash: "h3", Orchestrations: []string{"C"}, DeployedAt: t0.Add(2 * time.Minute)},
		{Hash: "h2", Orchestrations: []string{"A"}, DeployedAt: t0.Add(time.Minute)},
	}
	if err != nil || !reflect.DeepEqual(list, wantList) {
		t.Fatalf("ListModules = %+v, %v\nwant %+v", list, err, wantList)
	}
}

func TestModuleNotFound(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"GetModule", func() error { _, err := s.GetModule(ctx, "nope"); return err }, "sqlite: module nope not found"},
		{"ModuleFor", func() error { _, err := s.ModuleFor(ctx, "Nope"); return err }, `sqlite: orchestration "Nope" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, store.ErrNotFound) || err.Error() != tt.want {
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
		})
	}
}
