package sandbox

import (
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/internal/wasi"
)

func activate(b *testing.B, inst Instance, a *abi.Activation) {
	req := abi.EncodeActivation(a)
	res, err := inst.Call(ctx, "durabox_alloc", uint64(len(req)))
	if err != nil {
		b.Fatal(err)
	}
	inst.Write(uint32(res[0]), req)
	if _, err := inst.Call(ctx, "durabox_activate", res[0], uint64(len(req))); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkExpHelloTurns(b *testing.B) {
	mod := helloModule(b)
	cfg := Config{Env: wasi.NewDeterministic(seed(1), nil, nil), FromSnapshot: true}
	warm, _ := mod.Instantiate(ctx, cfg)
	warm.Close(ctx)
	var anon float64
	var t1, t2, t3 time.Duration
	for range b.N {
		before := memKiB(b)
		insts := make([]Instance, 100)
		for i := range insts {
			cfg.Env = wasi.NewDeterministic(seed(1), nil, nil)
			s := time.Now()
			inst, err := mod.Instantiate(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			insts[i] = inst
			t1 += time.Since(s)
			s = time.Now()
			activate(b, inst, &abi.Activation{Time: 1e18, Jobs: []abi.Job{{Kind: abi.JobStart, Name: "Greeting", InstanceID: "x", Input: []byte(`"world"`)}}})
			t2 += time.Since(s)
			s = time.Now()
			activate(b, inst, &abi.Activation{Time: 1e18 + 1000, Jobs: []abi.Job{{Kind: abi.JobResolveActivity, Seq: 1, Result: []byte(`"Hello, world!"`)}}})
			t3 += time.Since(s)
		}
		after := memKiB(b)
		anon = float64(after["Anonymous:"]-before["Anonymous:"]) / 100
		for _, inst := range insts {
			inst.Close(ctx)
		}
	}
	n := float64(b.N * 100)
	b.ReportMetric(anon, "anon-KiB/instance")
	b.ReportMetric(float64(t1.Microseconds())/n, "inst-us")
	b.ReportMetric(float64(t2.Microseconds())/n, "act1-us")
	b.ReportMetric(float64(t3.Microseconds())/n, "act2-us")
}
