package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/serving"
)

// scheduleDelays measures how late schedules fire under load: 10
// schedules, each starting a Greeting every second, for c.scheduleFor,
// while 16 clients start and wait for hellos as fast as the host takes
// them. For each slot decided in that time, the firing delay is from the
// slot's time to its decision (the run's instance created, in the same
// transaction), and the run's is from the slot's time to its run's
// completion (schedule_fire_delay_*, schedule_run_done_*).
func scheduleDelays(c *config, commits float64) error {
	b, err := newBench(c, "schedule", c.helloModule, serving.Config{})
	if err != nil {
		return err
	}
	defer b.close()
	ctx := context.Background()
	const schedules = 10
	for i := range schedules {
		if _, err := b.c.CreateSchedule(ctx, api.ScheduleRequest{Name: fmt.Sprint("every-second-", i), Every: "1s",
			Orchestration: "Greeting", Input: []byte(`"world"`), Overlap: "allow-all"}); err != nil {
			return err
		}
	}
	began := time.Now()
	loaded, err := loadUntil(b.h, began.Add(c.scheduleFor))
	if err != nil {
		return err
	}
	var fire, done []time.Duration
	for i := range schedules {
		sc, err := b.c.PauseSchedule(ctx, fmt.Sprint("every-second-", i), "the figure is taken")
		if err != nil {
			return err
		}
		for _, run := range sc.Runs {
			if run.Slot.Before(began) {
				continue
			}
			if run.Outcome != "started" {
				return fmt.Errorf("schedule %s: the slot %s was %s (%s); want every slot started", sc.Name, run.Slot.Format(time.RFC3339), run.Outcome, run.Error)
			}
			inst, err := b.c.Wait(ctx, run.InstanceID)
			if err != nil {
				return err
			}
			if err := check(inst.ID, inst.Status, inst.Result, "Hello, world!"); err != nil {
				return err
			}
			fire = append(fire, run.FiredAt.Sub(run.Slot))
			done = append(done, inst.UpdatedAt.Sub(run.Slot))
		}
	}
	if len(fire) == 0 {
		return errors.New("no slot fired while the figure was taken")
	}
	slices.Sort(fire)
	slices.Sort(done)
	fmt.Printf("# schedule: %d slots of %d schedules firing every second over %s, beside %d hellos (%.0f/s, %.2f a raw commit)\n",
		len(fire), schedules, c.scheduleFor, loaded, float64(loaded)/c.scheduleFor.Seconds(), float64(loaded)/c.scheduleFor.Seconds()/commits)
	report("schedule_fire_delay_p50", ms(fire[len(fire)/2]), "ms")
	report("schedule_fire_delay_p99", ms(fire[len(fire)*99/100]), "ms")
	report("schedule_fire_delay_max", ms(fire[len(fire)-1]), "ms")
	report("schedule_run_done_p50", ms(done[len(done)/2]), "ms")
	report("schedule_run_done_p99", ms(done[len(done)*99/100]), "ms")
	return nil
}

// loadUntil has 16 clients start Greetings and wait for each until end,
// and returns how many completed.
func loadUntil(h *host.Host, end time.Time) (int, error) {
	ctx := context.Background()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		n    int
		errs []error
	)
	for k := range 16 {
		wg.Go(func() {
			for i := 0; time.Now().Before(end); i++ {
				id := fmt.Sprintf("load-%d-%d", k, i)
				if _, err := h.Start(ctx, "Greeting", []byte(`"world"`), id); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				inst, err := h.Wait(ctx, id)
				if err == nil {
					err = check(id, inst.Status, inst.Result, "Hello, world!")
				}
				mu.Lock()
				n++
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	return n, errors.Join(errs...)
}
