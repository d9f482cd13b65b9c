//! [`Context`]: everything durable an orchestration does goes through it.

use std::cell::RefCell;
use std::future::Future;
use std::marker::PhantomData;
use std::rc::Rc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::codec::{self, Command};
use crate::json::{self, FromJson, ToJson};
use crate::op::{Branch, Joined, Op, Select, Selectable};
use crate::runtime::Shared;
use crate::Error;

/// What an orchestration uses to do anything durable: call activities,
/// start timers, wait for events, start children, race them, read the
/// logical clock. It is cheap to clone (a handle on the instance's state);
/// move a clone into each branch.
///
/// Every method that starts an operation emits its command at once and
/// returns its future ([`Op`]), which the orchestration awaits when it
/// needs the result.
#[derive(Clone)]
pub struct Context {
    pub(crate) shared: Rc<Shared>,
}

impl Context {
    /// The id of the orchestration instance.
    pub fn instance_id(&self) -> String {
        self.shared.allowed("ctx.instance_id");
        self.shared.state.borrow().instance_id.clone()
    }

    /// The logical time: when the step being applied was recorded. The
    /// same on every replay (and so is `SystemTime::now()`, inside a
    /// module).
    pub fn now(&self) -> SystemTime {
        self.shared.allowed("ctx.now");
        let nanos = self.shared.state.borrow().now;
        if nanos >= 0 {
            UNIX_EPOCH + Duration::from_nanos(nanos as u64)
        } else {
            UNIX_EPOCH - Duration::from_nanos(nanos.unsigned_abs())
        }
    }

    /// Whether the orchestration is re-running steps already recorded. It
    /// is the one thing that differs between a step's first run and its
    /// replays: guard only side effects outside history with it, never a
    /// decision.
    pub fn is_replaying(&self) -> bool {
        self.shared.allowed("ctx.is_replaying");
        self.shared.state.borrow().replaying
    }

    /// `Some(Error::Canceled { .. })` once the instance's cancellation was
    /// requested, None before. The operations it was waiting on then fail
    /// with that error; new ones (to clean up) run as usual. An
    /// orchestration that then returns an error ends Canceled; one that
    /// completes anyway, Completed.
    pub fn cancellation(&self) -> Option<Error> {
        self.shared.allowed("ctx.cancellation");
        self.shared
            .state
            .borrow()
            .cancelled
            .clone()
            .map(|r| Error::Canceled { reason: Some(r) })
    }

    /// Sets the instance's custom status, a short text clients read
    /// (`durabox status`). It is recorded in history and does not wait.
    pub fn set_custom_status(&self, status: &str) {
        if self.shared.allowed("ctx.set_custom_status") {
            self.shared.command(Command {
                kind: codec::SET_CUSTOM_STATUS,
                name: status.to_string(),
                ..Command::default()
            });
        }
    }

    fn op<T>(&self, what: &str, c: Command) -> Op<T> {
        Op {
            cell: self.shared.start(what, c),
            shared: self.shared.clone(),
            _t: PhantomData,
        }
    }

    /// Calls the activity `name` with `input` (encoded to JSON); the
    /// result decodes as `T`. A failed activity resolves to
    /// [`Error::Activity`].
    pub fn call_activity<T: FromJson>(&self, name: &str, input: &(impl ToJson + ?Sized)) -> Op<T> {
        self.activity(name, input, 0)
    }

    /// As [`call_activity`](Context::call_activity), with a deadline for
    /// each attempt in place of the host's `--activity-timeout`, rounded up
    /// to a whole millisecond. It must be positive.
    pub fn call_activity_with_timeout<T: FromJson>(
        &self,
        name: &str,
        input: &(impl ToJson + ?Sized),
        timeout: Duration,
    ) -> Op<T> {
        if timeout.is_zero() {
            return self.failed(format!(
                "durabox: the timeout of activity {:?} must be positive (call call_activity for the host's default)",
                name
            ));
        }
        let millis = timeout.as_nanos().saturating_add(999_999) / 1_000_000;
        self.activity(name, input, u64::try_from(millis).unwrap_or(u64::MAX))
    }

    fn activity<T: FromJson>(&self, name: &str, input: &(impl ToJson + ?Sized), timeout: u64) -> Op<T> {
        let c = Command {
            kind: codec::SCHEDULE_ACTIVITY,
            name: name.into(),
            input: json::to_vec(input),
            timeout,
            ..Command::default()
        };
        self.op("ctx.call_activity", c)
    }

    /// An operation that failed before it started, with this message.
    fn failed<T>(&self, message: String) -> Op<T> {
        Op {
            cell: crate::op::OpCell::settled(Err(Error::Invalid(message))),
            shared: self.shared.clone(),
            _t: PhantomData,
        }
    }

    /// A durable timer that fires `d` after the logical time; await it to
    /// sleep. A timer past 2262-04-11 (the latest time a host keeps) fires
    /// then.
    pub fn timer(&self, d: Duration) -> Op<()> {
        let delay = i64::try_from(d.as_nanos()).unwrap_or(i64::MAX);
        self.op(
            "ctx.timer",
            Command {
                kind: codec::START_TIMER,
                delay,
                ..Command::default()
            },
        )
    }

    /// The next external event called `name` (its data decodes as `T`).
    /// Events are positional: each goes to the oldest wait of its name
    /// active when it arrives, and one raised while none is active is
    /// dropped; use [`wait_event_persistent`](Context::wait_event_persistent)
    /// for events that must not be lost.
    pub fn wait_event<T: FromJson>(&self, name: &str) -> Op<T> {
        self.op(
            "ctx.wait_event",
            Command {
                kind: codec::WAIT_EVENT,
                name: name.into(),
                ..Command::default()
            },
        )
    }

    /// The oldest persistent event called `name` that no wait has taken,
    /// raised before or after this call (`durabox raise --persistent`). An
    /// execution takes at most 20.
    pub fn wait_event_persistent<T: FromJson>(&self, name: &str) -> Op<T> {
        self.op(
            "ctx.wait_event_persistent",
            Command {
                kind: codec::WAIT_EVENT_PERSISTENT,
                name: name.into(),
                ..Command::default()
            },
        )
    }

    /// Starts the orchestration `name` with `input` as a child instance
    /// and returns its result's future; a failed child resolves to
    /// [`Error::Child`]. Without an `id` the host derives one,
    /// `PARENT~EXECUTION:EVENT`; an id given must be one a client could
    /// choose, or the host fails this instance, saying why.
    pub fn call_child<T: FromJson>(&self, name: &str, input: &(impl ToJson + ?Sized), id: Option<&str>) -> Op<T> {
        self.op("ctx.call_child", self.child(name, input, id, false))
    }

    /// Starts the orchestration `name` with `input` as an instance nobody
    /// waits for, and returns at once.
    pub fn start_detached(&self, name: &str, input: &(impl ToJson + ?Sized), id: Option<&str>) -> Result<(), Error> {
        let op: Op<()> = self.op("ctx.start_detached", self.child(name, input, id, true));
        let outcome = op.cell.outcome();
        outcome.map(|_| ())
    }

    fn child(&self, name: &str, input: &(impl ToJson + ?Sized), id: Option<&str>, detached: bool) -> Command {
        Command {
            kind: codec::START_CHILD,
            name: name.into(),
            input: json::to_vec(input),
            instance_id: id.unwrap_or_default().into(),
            detached,
            ..Command::default()
        }
    }

    /// Raises the event `name` with `data` at the instance `instance_id`
    /// (a persistent event if `persistent`), as `durabox raise` does. The
    /// future resolves once the event is among that instance's messages,
    /// or fails with [`Error::Raise`] saying why it was not delivered. A
    /// raise cannot be taken back: cancelling leaves its future to resolve.
    pub fn raise(&self, instance_id: &str, name: &str, data: &(impl ToJson + ?Sized), persistent: bool) -> Op<()> {
        let c = Command {
            kind: codec::RAISE,
            name: name.into(),
            instance_id: instance_id.into(),
            input: json::to_vec(data),
            persistent,
            ..Command::default()
        };
        self.op("ctx.raise", c)
    }

    /// Waits until one of `futures` resolves and returns its index (the
    /// first in the list, if several have). The others are cancelled, each
    /// by a command history records (a timer will not fire, a wait takes
    /// no event), and resolve to `Error::Canceled { reason: None }`; a
    /// [`Branch`] that loses runs on. The winner is the same on every
    /// replay.
    ///
    /// ```ignore
    /// let decision = ctx.wait_event::<Decision>("Approval");
    /// let timeout = ctx.timer(Duration::from_secs(3600));
    /// if ctx.select(&[&decision, &timeout]).await == 0 {
    ///     let d = decision.await?;
    /// }
    /// ```
    pub fn select<'a>(&self, futures: &'a [&'a dyn Selectable]) -> Select<'a> {
        self.shared.allowed("ctx.select");
        Select { futures, cancel: true }
    }

    /// As [`select`](Context::select), but cancels nothing: the others run
    /// on and resolve in their own time.
    pub fn select_keep<'a>(&self, futures: &'a [&'a dyn Selectable]) -> Select<'a> {
        self.shared.allowed("ctx.select_keep");
        Select { futures, cancel: false }
    }

    /// Runs `fut` as a branch, beside the rest of the orchestration, and
    /// returns a future of its value. Branches run one at a time, in an
    /// order fixed by the code (never by timing), so they replay exactly.
    /// The orchestration ends when its own future does, whatever its
    /// branches are doing.
    pub fn spawn<T: 'static>(&self, fut: impl Future<Output = T> + 'static) -> Branch<T> {
        let joined = Rc::new(RefCell::new(Joined {
            value: None,
            done: false,
            wakers: Vec::new(),
        }));
        if self.shared.allowed("ctx.spawn") {
            let j = joined.clone();
            self.shared.spawned.borrow_mut().push(Box::pin(async move {
                let v = fut.await;
                j.borrow_mut().set(v);
            }));
        }
        Branch { joined }
    }

    /// The error that, returned by the orchestration, ends this execution
    /// and starts the next with `input` and an empty history:
    /// `return Err(ctx.continue_as_new(&next))`. Persistent events no wait
    /// took are carried over.
    pub fn continue_as_new(&self, input: &(impl ToJson + ?Sized)) -> Error {
        Error::ContinueAsNew {
            input: json::to_vec(input),
        }
    }

    /// Registers `handler` as the answer to the query `name` for this
    /// instance (`durabox query ID NAME --data JSON`): its argument decodes
    /// as `I`, its answer encodes from `O`. Registering a name again
    /// replaces its handler; the handlers still answer once the
    /// orchestration has ended. A handler only reads what it captures
    /// (share state with `Rc<RefCell<…>>`): one that uses the Context
    /// fails the query, and the instance goes on untouched.
    pub fn handle_query<I, O, F>(&self, name: &str, handler: F)
    where
        I: FromJson + 'static,
        O: ToJson + 'static,
        F: Fn(I) -> Result<O, Error> + 'static,
    {
        if !self.shared.allowed("ctx.handle_query") {
            return;
        }
        let query = name.to_string();
        let adapted = move |raw: &[u8]| -> Result<Vec<u8>, Error> {
            let input = json::from_slice::<I>(raw).map_err(|e| {
                Error::Invalid(format!(
                    "query {:?}: input {} does not decode: {}",
                    query,
                    String::from_utf8_lossy(raw),
                    e
                ))
            })?;
            handler(input).map(|out| json::to_vec(&out))
        };
        self.shared
            .queries
            .borrow_mut()
            .insert(name.to_string(), Rc::new(adapted));
    }
}
