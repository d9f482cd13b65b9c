package abi

import "fmt"

// MaxTaskQueue is the longest task queue name, in bytes.
const MaxTaskQueue = 100

// taskQueueRule says what a task queue's name may be, for CheckTaskQueue's
// errors.
const taskQueueRule = "a task queue's name is 1 to 100 letters, digits, '.', '_', ':' or '-', starting with a letter or digit"

// CheckTaskQueue returns a *TextError unless queue may name a task queue
// (ScheduleActivity's task_queue, a worker's poll): 1 to MaxTaskQueue
// ASCII letters, digits, '.', '_', ':' or '-', starting with a letter or a
// digit. The empty name, which means the host itself, is not one a worker
// serves, so CheckTaskQueue refuses it: callers that accept it test for it
// first.
func CheckTaskQueue(queue string) error {
	fail := func(problem string) error {
		return &TextError{What: "task queue", Value: queue, Problem: problem, Rule: taskQueueRule}
	}
	switch {
	case queue == "":
		return fail("is empty")
	case len(queue) > MaxTaskQueue:
		return fail(fmt.Sprintf("is %d bytes", len(queue)))
	case !alnum(queue[0]):
		return fail("starts with " + describeByte(queue, 0))
	}
	for i := 1; i < len(queue); i++ {
		if c := queue[i]; !alnum(c) && c != '.' && c != '_' && c != ':' && c != '-' {
			return fail("has " + describeByte(queue, i))
		}
	}
	return nil
}
