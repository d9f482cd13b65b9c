package host

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/server"
)

// TestSearchAttributes runs the attributes guest's Order on a host that
// keeps no instance live, so that every turn replays the execution and
// checks its SetAttributes commands against history. Through the HTTP
// API, GET /v1/instances?where= finds the orders by what they set, GET
// /v1/instances/{id} shows their attributes, a continue-as-new starts
// without the old ones, and a filter that does not parse is refused,
// saying where.
func TestSearchAttributes(t *testing.T) {
	t.Parallel()
	h := newBareHostWith(t, Options{NoLiveCache: true, Clock: func() time.Time { return conformanceNow }})
	deployGuest(t, h, "host/testdata/guests/attributes", nil)
	ctx := context.Background()
	for id, in := range map[string]string{
		"o1": `{"customer": "c-42", "amount": 150, "tags": ["vip", "new"]}`,
		"o2": `{"customer": "c-42", "amount": 20}`,
		"o3": `{"customer": "c-7", "amount": 5000, "tags": ["new"]}`,
	} {
		if _, err := h.Start(ctx, "Order", json.RawMessage(in), id); err != nil {
			t.Fatal(err)
		}
	}
	drive(t, h, conformanceNow, false)
	handler, err := server.New(h, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string, into any) int {
		t.Helper()
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost"+path, nil))
		if err := json.Unmarshal(rec.Body.Bytes(), into); err != nil {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		return rec.Code
	}
	list := func(where string) []string {
		t.Helper()
		var page api.InstancesResponse
		if code := get("/v1/instances?where="+url.QueryEscape(where), &page); code != http.StatusOK {
			t.Fatalf("GET where %s: %d", where, code)
		}
		var ids []string
		for _, i := range page.Instances {
			ids = append(ids, i.ID)
		}
		slices.Sort(ids)
		return ids
	}
	for _, c := range []struct {
		where string
		want  []string
	}{
		{`customer = "c-42" AND amount > 100`, []string{"o1"}},
		{`customer = "c-42"`, []string{"o1", "o2"}},
		{`paid = false`, []string{"o3"}},
		{`tags IS SET`, nil}, // dropped once charged
		{`placed = "` + conformanceNow.Format(time.RFC3339Nano) + `" AND status = "Running"`, []string{"o1", "o2", "o3"}},
	} {
		if got := list(c.where); !slices.Equal(got, c.want) {
			t.Errorf("where %s: %q; want %q", c.where, got, c.want)
		}
	}
	var d api.InstanceDetails
	get("/v1/instances/o1", &d)
	shown, _ := json.Marshal(d.Attributes)
	want := `[{"name":"amount","type":"float","value":150},{"name":"customer","type":"string","value":"c-42"},` +
		`{"name":"paid","type":"bool","value":true},{"name":"placed","type":"time","value":"` + conformanceNow.UTC().Format(time.RFC3339Nano) + `"}]`
	if string(shown) != want {
		t.Errorf("GET /v1/instances/o1 shows the attributes %s; want %s", shown, want)
	}

	// A continue-as-new starts without them; the next execution sets its
	// own.
	if err := h.Raise(ctx, "o1", "Next", json.RawMessage(`"again"`), false); err != nil {
		t.Fatal(err)
	}
	drive(t, h, conformanceNow, false)
	if got := list(`customer = "c-42" AND amount > 100`); got != nil {
		t.Errorf("after o1 continued as new, amount > 100 lists %q; want none", got)
	}
	if got := list(`customer = "c-42" AND amount = 0 AND paid = true`); !slices.Equal(got, []string{"o1"}) {
		t.Errorf("after o1 continued as new with amount 0: %q; want o1", got)
	}

	// Every execution replays on the module.
	for _, id := range []string{"o1", "o2", "o3"} {
		inst, err := h.Instance(ctx, id)
		if err != nil || inst.Status != engine.StatusRunning {
			t.Fatalf("%s: %+v, %v", id, inst, err)
		}
	}

	var refused api.ErrorResponse
	if code := get("/v1/instances?where="+url.QueryEscape(`customer = c-42`), &refused); code != http.StatusBadRequest ||
		!strings.Contains(refused.Error, `where="customer = c-42": query: at 12: expected a value after customer =, found the name "c"`) {
		t.Errorf("a filter that does not parse: %d %+v", code, refused)
	}
}
