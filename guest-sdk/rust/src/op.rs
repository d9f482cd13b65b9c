//! Futures of durable operations: [`Op`], one operation's result;
//! [`Branch`], a spawned task's; [`Select`], the first of several; and
//! [`all`], every one of several in order.

use std::cell::RefCell;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll, Waker};

use crate::codec::{self, Failure};
use crate::executor::{register, wake_all};
use crate::json::{self, FromJson};
use crate::runtime::Shared;
use crate::Error;

/// One operation (the command that started it) and its outcome once its
/// job came: the result's JSON, or the error.
pub(crate) struct OpCell {
    pub(crate) seq: u64,
    pub(crate) kind: u64,
    /// The activity's, child orchestration's or event's name.
    name: String,
    outcome: RefCell<Option<Result<Vec<u8>, Error>>>,
    wakers: RefCell<Vec<Waker>>,
}

impl OpCell {
    pub(crate) fn new(seq: u64, kind: u64, name: String) -> Rc<OpCell> {
        Rc::new(OpCell {
            seq,
            kind,
            name,
            outcome: RefCell::new(None),
            wakers: RefCell::new(Vec::new()),
        })
    }

    /// An operation that never started, settled with outcome.
    pub(crate) fn settled(outcome: Result<Vec<u8>, Error>) -> Rc<OpCell> {
        let op = OpCell::new(0, 0, String::new());
        op.settle(outcome);
        op
    }

    /// The outcome, or an empty result while none has come.
    pub(crate) fn outcome(&self) -> Result<Vec<u8>, Error> {
        self.outcome.borrow().clone().unwrap_or_else(|| Ok(Vec::new()))
    }

    pub(crate) fn is_settled(&self) -> bool {
        self.outcome.borrow().is_some()
    }

    /// Settles the operation from its job's result or failure.
    pub(crate) fn resolve(&self, result: Vec<u8>, failure: Option<Failure>) {
        let outcome = match failure {
            None => Ok(result),
            Some(f) => Err(match self.kind {
                codec::START_CHILD => Error::Child {
                    orchestration: self.name.clone(),
                    message: f.message,
                    details: f.details,
                },
                codec::RAISE => Error::Raise {
                    event: self.name.clone(),
                    message: f.message,
                },
                _ => Error::Activity {
                    activity: self.name.clone(),
                    message: f.message,
                    details: f.details,
                },
            }),
        };
        self.settle(outcome)
    }

    /// Settles the operation, once, and wakes the tasks waiting on it.
    pub(crate) fn settle(&self, outcome: Result<Vec<u8>, Error>) {
        if self.is_settled() {
            return;
        }
        *self.outcome.borrow_mut() = Some(outcome);
        wake_all(&mut self.wakers.borrow_mut());
    }

    fn wait(&self, waker: &Waker) {
        register(&mut self.wakers.borrow_mut(), waker);
    }
}

/// The future of one durable operation (an activity, a timer, an event, a
/// child, a raise), resolving to its result decoded as `T`. The operation
/// starts when the Context's method returns it, not when it is first
/// awaited: start several, then await them, to run them at once.
#[must_use = "an operation's result is lost unless awaited; its command is emitted either way"]
pub struct Op<T> {
    pub(crate) cell: Rc<OpCell>,
    pub(crate) shared: Rc<Shared>,
    pub(crate) _t: PhantomData<T>,
}

impl<T> Op<T> {
    /// Whether the operation's outcome has come.
    pub fn is_ready(&self) -> bool {
        self.cell.is_settled()
    }
}

impl<T: FromJson> Future for Op<T> {
    type Output = Result<T, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let outcome = self.cell.outcome.borrow().clone();
        match outcome {
            None => {
                self.cell.wait(cx.waker());
                Poll::Pending
            }
            Some(Err(e)) => Poll::Ready(Err(e)),
            Some(Ok(raw)) => Poll::Ready(json::from_slice(&raw).map_err(|e| {
                Error::Invalid(format!(
                    "durabox: result {} does not decode into {}: {}",
                    String::from_utf8_lossy(&raw),
                    json::type_name::<T>(),
                    e
                ))
            })),
        }
    }
}

/// Something [`Context::select`](crate::Context::select) can wait on: an
/// [`Op`] or a [`Branch`].
pub trait Selectable {
    /// Whether it has resolved.
    fn is_ready(&self) -> bool;
    #[doc(hidden)]
    fn wait(&self, waker: &Waker);
    #[doc(hidden)]
    fn cancel(&self);
}

impl<T> Selectable for Op<T> {
    fn is_ready(&self) -> bool {
        self.cell.is_settled()
    }

    fn wait(&self, waker: &Waker) {
        self.cell.wait(waker)
    }

    fn cancel(&self) {
        self.shared.cancel(&self.cell, Error::Canceled { reason: None })
    }
}

/// The future of [`Context::select`](crate::Context::select) and
/// [`Context::select_keep`](crate::Context::select_keep): the index of the
/// first of its futures to resolve.
#[must_use = "a select waits for nothing unless awaited"]
pub struct Select<'a> {
    pub(crate) futures: &'a [&'a dyn Selectable],
    /// Whether the losers are cancelled (select) or kept (select_keep).
    pub(crate) cancel: bool,
}

impl Future for Select<'_> {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<usize> {
        let winner = match self.futures.iter().position(|f| f.is_ready()) {
            Some(i) => i,
            None => {
                for f in self.futures {
                    f.wait(cx.waker());
                }
                return Poll::Pending;
            }
        };
        if self.cancel {
            for (i, f) in self.futures.iter().enumerate() {
                if i != winner {
                    f.cancel();
                }
            }
        }
        Poll::Ready(winner)
    }
}

/// What a branch leaves for its [`Branch`]: its value once it returns.
pub(crate) struct Joined<T> {
    pub(crate) value: Option<T>,
    pub(crate) done: bool,
    pub(crate) wakers: Vec<Waker>,
}

impl<T> Joined<T> {
    pub(crate) fn set(&mut self, v: T) {
        self.value = Some(v);
        self.done = true;
        wake_all(&mut self.wakers);
    }
}

/// The future of a branch started with
/// [`Context::spawn`](crate::Context::spawn): the branch's value, once it
/// returns. A branch is no operation: a select it loses leaves it running.
#[must_use = "a branch runs whether or not it is awaited; await it for its value"]
pub struct Branch<T> {
    pub(crate) joined: Rc<RefCell<Joined<T>>>,
}

impl<T> Future for Branch<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<T> {
        let mut j = self.joined.borrow_mut();
        match j.value.take() {
            Some(v) => Poll::Ready(v),
            None => {
                register(&mut j.wakers, cx.waker());
                Poll::Pending
            }
        }
    }
}

impl<T> Selectable for Branch<T> {
    fn is_ready(&self) -> bool {
        self.joined.borrow().done
    }

    fn wait(&self, waker: &Waker) {
        register(&mut self.joined.borrow_mut().wakers, waker)
    }

    fn cancel(&self) {}
}

/// Waits for every future, in order, and returns their values in that
/// order (not the order they resolved in); or the first error in that
/// order, once every one has resolved.
///
/// ```ignore
/// let counts = durabox::all(docs.iter().map(|d| ctx.call_activity::<u64>("Count", d))).await?;
/// ```
pub async fn all<T, F>(futures: impl IntoIterator<Item = F>) -> Result<Vec<T>, Error>
where
    F: Future<Output = Result<T, Error>>,
{
    let futures: Vec<F> = futures.into_iter().collect();
    let mut out = Vec::with_capacity(futures.len());
    let mut first = None;
    for f in futures {
        match f.await {
            Ok(v) => out.push(v),
            Err(e) => {
                if first.is_none() {
                    first = Some(e);
                }
            }
        }
    }
    match first {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
