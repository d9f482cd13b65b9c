//! The single-threaded executor that drives an orchestration's tasks: the
//! orchestration's own future and the branches it spawns. A task runs when
//! something it waits on wakes it, in the order the wakes came; wakes come
//! only from jobs applied and from other tasks, so the order is the same on
//! every replay. std::task only: a waker is an `Arc` that queues its
//! task's number.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Wake, Waker};

/// A task: a boxed future, run for its effects.
pub(crate) type Task = Pin<Box<dyn Future<Output = ()>>>;

/// The queue of tasks woken and not yet polled. A Mutex because Wake wants
/// Send and Sync; a guest has one thread, so it is never contended.
type Ready = Arc<Mutex<VecDeque<usize>>>;

struct TaskWaker {
    id: usize,
    ready: Ready,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref()
    }

    fn wake_by_ref(self: &Arc<Self>) {
        push(&self.ready, self.id)
    }
}

fn push(ready: &Ready, id: usize) {
    // A poisoned lock cannot happen (nothing panics while holding it and
    // a panic aborts a guest); take the queue either way.
    let mut q = ready.lock().unwrap_or_else(|e| e.into_inner());
    if !q.contains(&id) {
        q.push_back(id);
    }
}

#[derive(Default)]
pub(crate) struct Executor {
    /// Every task spawned, by number; None once it has finished.
    tasks: Vec<Option<(Task, Waker)>>,
    ready: Ready,
}

impl Executor {
    /// Adds a task, ready to run.
    pub(crate) fn spawn(&mut self, task: Task) {
        let id = self.tasks.len();
        let waker = Waker::from(Arc::new(TaskWaker {
            id,
            ready: self.ready.clone(),
        }));
        self.tasks.push(Some((task, waker)));
        push(&self.ready, id);
    }

    /// Runs tasks until none is ready: polls each task woken, in the order
    /// woken, taking the tasks spawn_more yields before each poll, and
    /// stops early once stop says so (the orchestration has ended).
    pub(crate) fn run(&mut self, mut spawn_more: impl FnMut() -> Vec<Task>, stop: impl Fn() -> bool) {
        loop {
            for t in spawn_more() {
                self.spawn(t);
            }
            if stop() {
                return;
            }
            let next = self.ready.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
            let id = match next {
                Some(id) => id,
                None => return,
            };
            if let Some((mut task, waker)) = self.tasks[id].take() {
                if task.as_mut().poll(&mut Context::from_waker(&waker)).is_pending() {
                    self.tasks[id] = Some((task, waker));
                }
            }
        }
    }
}

/// Adds waker to wakers unless a waker that wakes the same task is there.
pub(crate) fn register(wakers: &mut Vec<Waker>, waker: &Waker) {
    if !wakers.iter().any(|w| w.will_wake(waker)) {
        wakers.push(waker.clone());
    }
}

/// Wakes every waker, emptying the list.
pub(crate) fn wake_all(wakers: &mut Vec<Waker>) {
    for w in wakers.drain(..) {
        w.wake();
    }
}

/// A waker that does nothing, for tests.
#[cfg(test)]
pub(crate) fn noop_waker() -> Waker {
    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }
    Waker::from(Arc::new(Noop))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::task::Poll;

    /// A future pending until its flag is set, recording its waker.
    struct Gate(Rc<RefCell<(bool, Vec<Waker>)>>);

    impl Future for Gate {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            let mut g = self.0.borrow_mut();
            if g.0 {
                return Poll::Ready(());
            }
            register(&mut g.1, cx.waker());
            Poll::Pending
        }
    }

    #[test]
    fn runs_tasks_in_the_order_they_are_woken() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let gates: Vec<_> = (0..3).map(|_| Rc::new(RefCell::new((false, Vec::new())))).collect();
        let mut ex = Executor::default();
        for (i, g) in gates.iter().enumerate() {
            let (log, g) = (log.clone(), g.clone());
            ex.spawn(Box::pin(async move {
                log.borrow_mut().push(format!("start {}", i));
                Gate(g).await;
                log.borrow_mut().push(format!("end {}", i));
            }));
        }
        ex.run(Vec::new, || false);
        assert_eq!(*log.borrow(), ["start 0", "start 1", "start 2"]);
        // Opened 2 then 0: they end in that order, and 1 never polls again.
        for i in [2, 0] {
            let mut g = gates[i].borrow_mut();
            g.0 = true;
            wake_all(&mut g.1);
        }
        ex.run(Vec::new, || false);
        assert_eq!(log.borrow()[3..], ["end 2", "end 0"]);
        assert!(ex.tasks[0].is_none() && ex.tasks[1].is_some() && ex.tasks[2].is_none());
    }

    #[test]
    fn a_waker_registered_twice_wakes_once() {
        let (a, b) = (noop_waker(), noop_waker());
        let mut wakers = Vec::new();
        register(&mut wakers, &a);
        register(&mut wakers, &a);
        register(&mut wakers, &b);
        assert_eq!(wakers.len(), 2);
    }

    #[test]
    fn stops_when_told_and_takes_new_tasks() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut ex = Executor::default();
        let mut more = vec![{
            let log = log.clone();
            Box::pin(async move { log.borrow_mut().push("spawned") }) as Task
        }];
        ex.run(|| std::mem::take(&mut more), || false);
        assert_eq!(*log.borrow(), ["spawned"]);
        let l2 = log.clone();
        ex.spawn(Box::pin(async move { l2.borrow_mut().push("never") }));
        ex.run(Vec::new, || true);
        assert_eq!(*log.borrow(), ["spawned"]);
    }
}
