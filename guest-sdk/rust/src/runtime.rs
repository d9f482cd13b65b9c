//! The guest side of one orchestration instance: the state its Context
//! shares with the exports, how an activation's jobs settle operations,
//! how commands are numbered, and how the orchestration ends.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::codec::{self, Activation, Command, Failure, Job};
use crate::executor::{Executor, Task};
use crate::op::OpCell;
use crate::registry::Registry;
use crate::update::{self, Updates};
use crate::{Context, Error};

/// A query handler on JSON: the argument in, the answer out.
pub(crate) type QueryFn = dyn Fn(&[u8]) -> Result<Vec<u8>, Error>;

/// What the orchestration's Context shares with the runtime.
#[derive(Default)]
pub(crate) struct Shared {
    pub(crate) state: RefCell<State>,
    /// The query handlers registered, by name; apart from state, so that a
    /// handler runs with state free (and may try, and fail, to use it).
    pub(crate) queries: RefCell<BTreeMap<String, Rc<QueryFn>>>,
    /// The update handlers registered, and those running.
    pub(crate) updates: RefCell<Updates>,
    /// Tasks spawned since the executor last took them.
    pub(crate) spawned: RefCell<Vec<Task>>,
}

#[derive(Default)]
pub(crate) struct State {
    /// The sequence number of the last command emitted.
    seq: u64,
    /// The commands emitted in this activation.
    commands: Vec<Command>,
    /// Every operation whose job has not come, by seq.
    open: BTreeMap<u64, Rc<OpCell>>,
    /// The activation's logical time, Unix nanoseconds.
    pub(crate) now: i64,
    pub(crate) replaying: bool,
    pub(crate) instance_id: String,
    started: bool,
    /// The reason, once the instance's cancellation was requested.
    pub(crate) cancelled: Option<String>,
    ended: bool,
    /// Set when the activation's update is refused: its refusal is the
    /// activation's only command, and no code runs after it.
    refused: bool,
    /// What kind of code that may only read runs, if some does ("a query",
    /// "a validator"), and the first thing it tried that it may not.
    reading: Option<&'static str>,
    misuse: Option<String>,
    /// Every answer `patched` gave in this execution, by change id.
    pub(crate) patched: BTreeMap<String, bool>,
}

impl Shared {
    /// Whether the caller, doing what, may go on: false while a query's
    /// handler or an update's validator runs, which fails instead.
    pub(crate) fn allowed(&self, what: &str) -> bool {
        let mut st = self.state.borrow_mut();
        if st.reading.is_none() {
            return true;
        }
        if st.misuse.is_none() {
            st.misuse = Some(what.to_string());
        }
        false
    }

    /// Emits c with the next sequence number, unless the orchestration has
    /// ended (nothing may follow its last command), and returns the number.
    pub(crate) fn command(&self, mut c: Command) -> u64 {
        let mut st = self.state.borrow_mut();
        if st.ended {
            return 0;
        }
        st.seq += 1;
        c.seq = st.seq;
        st.commands.push(c);
        st.seq
    }

    /// Starts the operation c describes and returns its cell, which its job
    /// settles; what (the API called) fails the query or validator that
    /// tries it.
    pub(crate) fn start(&self, what: &str, c: Command) -> Rc<OpCell> {
        if !self.allowed(what) {
            let kind = self.state.borrow().reading.unwrap_or_default();
            return OpCell::settled(Err(Error::Invalid(format!(
                "durabox: {} is not allowed in {}",
                what, kind
            ))));
        }
        let (kind, name, detached) = (c.kind, c.name.clone(), c.detached);
        let seq = self.command(c);
        let op = OpCell::new(seq, kind, name);
        if detached {
            op.settle(Ok(Vec::new()));
        } else if seq != 0 {
            self.state.borrow_mut().open.insert(seq, op.clone());
        }
        op
    }

    /// Cancels op with a command history records and settles it with err,
    /// unless it has settled. A raise cannot be taken back: its outcome
    /// comes whatever happens.
    pub(crate) fn cancel(&self, op: &OpCell, err: Error) {
        if op.is_settled() || op.seq == 0 || op.kind == codec::RAISE {
            return;
        }
        let kind = match op.kind {
            codec::SCHEDULE_ACTIVITY => codec::CANCEL_ACTIVITY,
            codec::WAIT_EVENT | codec::WAIT_EVENT_PERSISTENT => codec::CANCEL_WAIT,
            codec::START_CHILD => codec::CANCEL_CHILD,
            _ => codec::CANCEL_TIMER,
        };
        self.command(Command {
            kind,
            target: op.seq,
            ..Command::default()
        });
        self.state.borrow_mut().open.remove(&op.seq);
        op.settle(Err(err));
    }

    fn ended(&self) -> bool {
        self.state.borrow().ended
    }

    /// Makes c, the refusal of the update the activation delivers, the
    /// activation's only command: the host records nothing else of it, and
    /// runs the step again without the update on a fresh instance.
    pub(crate) fn refuse(&self, mut c: Command) {
        let mut st = self.state.borrow_mut();
        st.seq += 1;
        c.seq = st.seq;
        st.commands = vec![c];
        st.refused = true;
    }

    /// Runs f, the code what (the handler of a query, the validator of an
    /// update: code of the kind that may only read), and returns its
    /// answer, or its failure: its error, or the first use of the Context
    /// it tried.
    pub(crate) fn read_only(
        &self,
        what: &str,
        kind: &'static str,
        f: impl FnOnce() -> Result<Vec<u8>, Error>,
    ) -> Result<Vec<u8>, Failure> {
        self.state.borrow_mut().reading = Some(kind);
        let out = f();
        let misuse = {
            let mut st = self.state.borrow_mut();
            st.reading = None;
            st.misuse.take()
        };
        match (misuse, out) {
            (Some(used), _) => Err(failure(format!(
                "durabox: {} called {}: {} only reads the orchestration's state, and may not use its Context or futures \
                 (nothing was scheduled; the instance goes on as before)",
                what, used, kind
            ))),
            (None, Ok(out)) => Ok(out),
            (None, Err(e)) => Err(e.failure()),
        }
    }

    /// Emits the command that ends the orchestration with its outcome.
    fn finish(&self, outcome: Result<Vec<u8>, Error>) {
        let c = match outcome {
            Ok(output) => Command {
                kind: codec::COMPLETE,
                output,
                ..Command::default()
            },
            Err(Error::ContinueAsNew { input }) => Command {
                kind: codec::CONTINUE_AS_NEW,
                output: input,
                ..Command::default()
            },
            Err(e) => Command {
                kind: codec::FAIL,
                failure: Some(e.failure()),
                ..Command::default()
            },
        };
        self.command(c);
        self.state.borrow_mut().ended = true;
    }
}

/// One orchestration instance's runtime: a wasm instance runs one.
pub(crate) struct Runtime {
    shared: Rc<Shared>,
    executor: Executor,
}

impl Runtime {
    pub(crate) fn new() -> Self {
        Runtime {
            shared: Rc::new(Shared::default()),
            executor: Executor::default(),
        }
    }

    /// Applies an activation's jobs, all of them, then runs the
    /// orchestration until nothing more can progress (unless the activation
    /// refused an update), and returns the commands it emitted and whether
    /// an update could wake it (handles_updates).
    pub(crate) fn activate(&mut self, reg: &Registry, a: Activation) -> (Vec<Command>, bool) {
        {
            let mut st = self.shared.state.borrow_mut();
            st.now = a.time;
            st.replaying = a.replaying;
        }
        for j in a.jobs {
            self.apply(reg, j);
        }
        let shared = &self.shared;
        if !std::mem::take(&mut shared.state.borrow_mut().refused) {
            self.executor
                .run(|| std::mem::take(&mut *shared.spawned.borrow_mut()), || shared.ended());
        }
        let handles_updates = shared.updates.borrow().any() && !shared.ended();
        (std::mem::take(&mut shared.state.borrow_mut().commands), handles_updates)
    }

    fn apply(&mut self, reg: &Registry, j: Job) {
        let shared = &self.shared;
        match j.kind {
            codec::JOB_START => {
                {
                    let mut st = shared.state.borrow_mut();
                    if st.started {
                        return;
                    }
                    st.started = true;
                    st.instance_id = j.instance_id;
                }
                match reg.orchestration_fn(&j.name) {
                    Some(run) => {
                        let ctx = Context { shared: shared.clone() };
                        let fut = run(ctx, j.input);
                        let me = shared.clone();
                        self.executor.spawn(Box::pin(async move { me.finish(fut.await) }));
                    }
                    None => shared.finish(Err(Error::msg(format!(
                        "durabox: this module registers no orchestration {:?} (it registers [{}])",
                        j.name,
                        reg.orchestration_names().join(" ")
                    )))),
                }
            }
            codec::JOB_CANCEL => {
                let reason = j.name;
                let open: Vec<Rc<OpCell>> = {
                    let mut st = shared.state.borrow_mut();
                    st.cancelled = Some(reason.clone());
                    st.open.values().cloned().collect()
                };
                for op in open {
                    shared.cancel(
                        &op,
                        Error::Canceled {
                            reason: Some(reason.clone()),
                        },
                    );
                }
            }
            codec::JOB_RESOLVE_ACTIVITY
            | codec::JOB_FIRE_TIMER
            | codec::JOB_RESOLVE_EVENT
            | codec::JOB_RESOLVE_CHILD
            | codec::JOB_RESOLVE_RAISE => {
                // A seq with no open operation is a host's bug; nothing
                // waits on it.
                let op = shared.state.borrow_mut().open.remove(&j.seq);
                if let Some(op) = op {
                    op.resolve(j.result, j.failure);
                }
            }
            codec::JOB_UPDATE => {
                if let Some(task) = update::deliver(shared, j) {
                    self.executor.spawn(task);
                }
            }
            // A kind of a later ABI version, which this one never sends.
            _ => {}
        }
    }

    /// Answers the query name with input from the handlers registered so
    /// far; with the answer, the sorted names of the query handlers and of
    /// the update handlers.
    pub(crate) fn query(&self, name: &str, input: &[u8]) -> (Result<Vec<u8>, Failure>, Vec<String>, Vec<String>) {
        let (handler, names) = {
            let q = self.shared.queries.borrow();
            (q.get(name).cloned(), q.keys().cloned().collect())
        };
        let updates = self.shared.updates.borrow().names();
        let outcome = match handler {
            Some(h) => {
                let what = format!("the handler of query {:?}", name);
                self.shared.read_only(&what, "a query", || h(input))
            }
            None => Err(failure(format!("durabox: the instance handles no query {:?}", name))),
        };
        (outcome, names, updates)
    }
}

fn failure(message: String) -> Failure {
    Failure {
        message,
        details: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::*;
    use crate::ActivityInfo;
    use std::cell::Cell;
    use std::time::Duration;

    fn job(kind: u64, seq: u64) -> Job {
        Job {
            kind,
            seq,
            ..Job::default()
        }
    }

    fn start(name: &str, input: &str) -> Job {
        Job {
            kind: JOB_START,
            name: name.into(),
            instance_id: "i-1".into(),
            input: input.as_bytes().to_vec(),
            ..Job::default()
        }
    }

    fn resolve(kind: u64, seq: u64, result: &str) -> Job {
        Job {
            result: result.as_bytes().to_vec(),
            ..job(kind, seq)
        }
    }

    fn cmd(kind: u64, seq: u64) -> Command {
        Command {
            kind,
            seq,
            ..Command::default()
        }
    }

    fn named(kind: u64, seq: u64, name: &str, input: &str) -> Command {
        Command {
            name: name.into(),
            input: input.as_bytes().to_vec(),
            ..cmd(kind, seq)
        }
    }

    fn complete(seq: u64, output: &str) -> Command {
        Command {
            output: output.as_bytes().to_vec(),
            ..cmd(COMPLETE, seq)
        }
    }

    fn fail(seq: u64, message: &str) -> Command {
        Command {
            failure: Some(Failure {
                message: message.into(),
                details: String::new(),
            }),
            ..cmd(FAIL, seq)
        }
    }

    fn cancel(kind: u64, seq: u64, target: u64) -> Command {
        Command {
            target,
            ..cmd(kind, seq)
        }
    }

    /// A runtime for the orchestrations of registry(), driven through
    /// encoded activations as the host drives a module.
    struct Driver {
        reg: Registry,
        rt: Runtime,
    }

    impl Driver {
        fn new() -> Self {
            let mut reg = Registry::default();
            registry(&mut reg);
            Driver {
                reg,
                rt: Runtime::new(),
            }
        }

        fn activate(&mut self, jobs: Vec<Job>) -> Vec<Command> {
            let bytes = crate::codec::tests::encode_activation(&Activation {
                time: 1_000,
                replaying: false,
                jobs,
            });
            self.rt.activate(&self.reg, decode_activation(&bytes).unwrap()).0
        }
    }

    fn registry(r: &mut Registry) {
        r.orchestration("Hello", |ctx: Context, name: String| async move {
            ctx.call_activity::<String>("SayHello", &name).await
        });
        r.orchestration("Race", |ctx: Context, _: ()| async move {
            let event = ctx.wait_event::<String>("Go");
            let timer = ctx.timer(Duration::from_secs(60));
            match ctx.select(&[&event, &timer]).await {
                0 => event.await,
                _ => Ok("timed out".to_string()),
            }
        });
        r.orchestration("Cancellable", |ctx: Context, _: ()| async move {
            let a = ctx.call_activity::<()>("Work", &1);
            let t = ctx.timer(Duration::from_secs(1));
            let w = ctx.wait_event_persistent::<()>("E");
            let c = ctx.call_child::<()>("Child", &(), None);
            ctx.start_detached("Child", &(), Some("d-1"))?;
            let errors: Vec<String> = [
                a.await.unwrap_err(),
                t.await.unwrap_err(),
                w.await.unwrap_err(),
                c.await.unwrap_err(),
            ]
            .iter()
            .map(|e| e.to_string())
            .collect();
            assert_eq!(
                ctx.cancellation().map(|e| e.to_string()),
                Some("durabox: the instance was cancelled: why".to_string())
            );
            ctx.call_activity::<()>("Cleanup", &errors).await?;
            Err::<(), _>(ctx.cancellation().unwrap())
        });
        r.orchestration("Patchy", |ctx: Context, _: ()| async move {
            let first = ctx.patched("change");
            Ok(vec![first, ctx.patched("change")])
        });
        r.orchestration("Again", |ctx: Context, n: u32| async move {
            ctx.set_custom_status(&format!("round {}", n));
            Err::<(), _>(ctx.continue_as_new(&(n + 1)))
        });
        r.orchestration("Branches", |ctx: Context, _: ()| async move {
            let c2 = ctx.clone();
            let branch = ctx.spawn(async move { c2.call_activity::<i64>("B", &()).await });
            let main = ctx.call_activity::<i64>("A", &());
            let first = ctx.select_keep(&[&branch, &main]).await;
            let (b, a) = (branch.await?, main.await?);
            Ok(vec![first as i64, a, b])
        });
        r.orchestration("Queried", |ctx: Context, _: ()| async move {
            let c2 = ctx.clone();
            ctx.handle_query("Echo", |s: String| Ok(s));
            ctx.handle_query("Sneaky", move |_: ()| Ok(c2.timer(Duration::from_secs(1)).is_ready()));
            ctx.handle_query("Fails", |_: ()| Err::<(), _>(Error::msg("no answer")));
            ctx.wait_event::<()>("Never").await
        });
        r.orchestration("Updatable", |ctx: Context, _: ()| async move {
            let sum = Rc::new(Cell::new(0i64));
            let s = sum.clone();
            ctx.handle_update("add", move |ctx: Context, n: i64| {
                let s = s.clone();
                async move {
                    let echoed = ctx.call_activity::<i64>("Echo", &n).await?;
                    s.set(s.get() + echoed);
                    Ok(s.get())
                }
            })
            .validator(|n: &i64| match *n < 0 {
                true => Err(Error::msg("a negative number")),
                false => Ok(()),
            });
            let c2 = ctx.clone();
            ctx.handle_update("sneaky", |_: Context, _: ()| async { Ok(()) })
                .validator(move |_: &()| {
                    let _ = c2.timer(Duration::from_secs(1));
                    Ok(())
                });
            // A query may not register a handler, nor give one a validator.
            let c3 = ctx.clone();
            ctx.handle_query("meddle", move |_: ()| {
                let _ = c3
                    .handle_update("add", |_: Context, _: i64| async { Ok(0) })
                    .validator(|_: &i64| Err(Error::msg("meddled")));
                Ok(())
            });
            ctx.wait_event::<()>("stop").await?;
            ctx.all_handlers_finished().await;
            Ok(sum.get())
        });
        r.activity("SayHello", |_: &ActivityInfo, name: String| {
            Ok(format!("Hello, {}!", name))
        });
    }

    #[test]
    fn schedules_then_completes() {
        let mut d = Driver::new();
        assert_eq!(
            d.activate(vec![start("Hello", "\"world\"")]),
            vec![named(SCHEDULE_ACTIVITY, 1, "SayHello", "\"world\"")]
        );
        assert_eq!(
            d.activate(vec![resolve(JOB_RESOLVE_ACTIVITY, 1, "\"Hello, world!\"")]),
            vec![complete(2, "\"Hello, world!\"")]
        );
    }

    #[test]
    fn an_activity_failure_fails_the_orchestration() {
        let mut d = Driver::new();
        d.activate(vec![start("Hello", "\"world\"")]);
        let failure = Some(Failure {
            message: "no voice".into(),
            details: "trace".into(),
        });
        let got = d.activate(vec![Job {
            failure,
            ..job(JOB_RESOLVE_ACTIVITY, 1)
        }]);
        let want = Command {
            failure: Some(Failure {
                message: "activity \"SayHello\" failed: no voice".into(),
                details: "trace".into(),
            }),
            ..cmd(FAIL, 2)
        };
        assert_eq!(got, vec![want]);
    }

    #[test]
    fn input_that_does_not_decode_fails_the_orchestration() {
        let mut d = Driver::new();
        let want = "orchestration \"Hello\": input 42 does not decode into String: expected a string, found a number";
        assert_eq!(d.activate(vec![start("Hello", "42")]), vec![fail(1, want)]);
    }

    #[test]
    fn an_orchestration_the_module_lacks_fails_with_seq_1() {
        let mut d = Driver::new();
        let want = "durabox: this module registers no orchestration \"Nope\" (it registers [Again Branches Cancellable Hello Patchy Queried Race Updatable])";
        assert_eq!(d.activate(vec![start("Nope", "null")]), vec![fail(1, want)]);
    }

    #[test]
    fn select_cancels_the_loser() {
        let mut d = Driver::new();
        let started = d.activate(vec![start("Race", "null")]);
        assert_eq!(
            started,
            vec![
                named(WAIT_EVENT, 1, "Go", ""),
                Command {
                    delay: 60_000_000_000,
                    ..cmd(START_TIMER, 2)
                }
            ]
        );
        assert_eq!(
            d.activate(vec![job(JOB_FIRE_TIMER, 2)]),
            vec![cancel(CANCEL_WAIT, 3, 1), complete(4, "\"timed out\"")]
        );

        let mut d = Driver::new();
        d.activate(vec![start("Race", "null")]);
        assert_eq!(
            d.activate(vec![resolve(JOB_RESOLVE_EVENT, 1, "\"go\"")]),
            vec![cancel(CANCEL_TIMER, 3, 2), complete(4, "\"go\"")]
        );
    }

    #[test]
    fn every_job_applies_before_the_code_runs() {
        // The timer's job comes first, but both are applied before the
        // select looks: the first in its list (the event) wins, and
        // nothing is left to cancel.
        let mut d = Driver::new();
        d.activate(vec![start("Race", "null")]);
        assert_eq!(
            d.activate(vec![job(JOB_FIRE_TIMER, 2), resolve(JOB_RESOLVE_EVENT, 1, "\"go\"")]),
            vec![complete(3, "\"go\"")]
        );
    }

    #[test]
    fn cancel_cancels_every_open_operation_in_seq_order() {
        let mut d = Driver::new();
        let started = d.activate(vec![start("Cancellable", "null")]);
        let kinds: Vec<u64> = started.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            vec![
                SCHEDULE_ACTIVITY,
                START_TIMER,
                WAIT_EVENT_PERSISTENT,
                START_CHILD,
                START_CHILD
            ]
        );
        assert!(started[4].detached && started[4].instance_id == "d-1");
        let got = d.activate(vec![Job {
            name: "why".into(),
            ..job(JOB_CANCEL, 0)
        }]);
        let errors = r#"["durabox: the instance was cancelled: why","durabox: the instance was cancelled: why","durabox: the instance was cancelled: why","durabox: the instance was cancelled: why"]"#;
        assert_eq!(
            got,
            vec![
                cancel(CANCEL_ACTIVITY, 6, 1),
                cancel(CANCEL_TIMER, 7, 2),
                cancel(CANCEL_WAIT, 8, 3),
                cancel(CANCEL_CHILD, 9, 4),
                named(SCHEDULE_ACTIVITY, 10, "Cleanup", errors),
            ]
        );
        assert_eq!(
            d.activate(vec![resolve(JOB_RESOLVE_ACTIVITY, 10, "null")]),
            vec![fail(11, "durabox: the instance was cancelled: why")]
        );
    }

    #[test]
    fn a_patch_is_asked_once_and_recorded_when_taken() {
        let mut d = Driver::new();
        let got = d.activate(vec![start("Patchy", "null")]);
        assert_eq!(got, vec![named(PATCH, 1, "change", ""), complete(2, "[true,true]")]);
    }

    #[test]
    fn continues_as_new() {
        let mut d = Driver::new();
        let got = d.activate(vec![start("Again", "7")]);
        let status = Command {
            name: "round 7".into(),
            ..cmd(SET_CUSTOM_STATUS, 1)
        };
        assert_eq!(
            got,
            vec![
                status,
                Command {
                    output: b"8".to_vec(),
                    ..cmd(CONTINUE_AS_NEW, 2)
                }
            ]
        );
    }

    #[test]
    fn branches_run_beside_the_orchestration() {
        let mut d = Driver::new();
        // The branch is spawned first, but runs when the orchestration
        // waits: A is scheduled before B.
        assert_eq!(
            d.activate(vec![start("Branches", "null")]),
            vec![
                named(SCHEDULE_ACTIVITY, 1, "A", "null"),
                named(SCHEDULE_ACTIVITY, 2, "B", "null")
            ]
        );
        assert_eq!(d.activate(vec![resolve(JOB_RESOLVE_ACTIVITY, 2, "20")]), vec![]);
        assert_eq!(
            d.activate(vec![resolve(JOB_RESOLVE_ACTIVITY, 1, "10")]),
            vec![complete(3, "[0,10,20]")]
        );
    }

    #[test]
    fn queries_answer_and_change_nothing() {
        let mut d = Driver::new();
        assert_eq!(
            d.activate(vec![start("Queried", "null")]),
            vec![named(WAIT_EVENT, 1, "Never", "")]
        );
        let names = vec!["Echo".to_string(), "Fails".to_string(), "Sneaky".to_string()];
        assert_eq!(
            d.rt.query("Echo", b"\"hi\""),
            (Ok(b"\"hi\"".to_vec()), names.clone(), vec![])
        );
        let failed = |m: &str| {
            (
                Err(Failure {
                    message: m.into(),
                    details: String::new(),
                }),
                names.clone(),
                vec![],
            )
        };
        assert_eq!(d.rt.query("Fails", b""), failed("no answer"));
        assert_eq!(
            d.rt.query("Nope", b""),
            failed("durabox: the instance handles no query \"Nope\"")
        );
        assert_eq!(
            d.rt.query("Echo", b"1"),
            failed("query \"Echo\": input 1 does not decode: expected a string, found a number")
        );
        assert_eq!(
            d.rt.query("Sneaky", b""),
            failed("durabox: the handler of query \"Sneaky\" called ctx.timer: a query only reads the orchestration's state, and may not use its Context or futures (nothing was scheduled; the instance goes on as before)")
        );
        // The sneaky timer was not emitted: the next command is seq 2.
        assert_eq!(
            d.activate(vec![resolve(JOB_RESOLVE_EVENT, 1, "")]),
            vec![complete(2, "null")]
        );
        assert_eq!(d.rt.query("Echo", b"\"after\"").0, Ok(b"\"after\"".to_vec()));
    }

    fn update(name: &str, id: &str, input: &str) -> Job {
        Job {
            name: name.into(),
            update_id: id.into(),
            input: input.as_bytes().to_vec(),
            ..job(JOB_UPDATE, 0)
        }
    }

    fn answer(seq: u64, id: &str, output: &str, failure: Option<&str>) -> Command {
        Command {
            update_id: id.into(),
            output: output.as_bytes().to_vec(),
            failure: failure.map(|m| Failure {
                message: m.into(),
                details: String::new(),
            }),
            ..cmd(COMPLETE_UPDATE, seq)
        }
    }

    fn refusal(seq: u64, id: &str, message: &str) -> Command {
        Command {
            kind: REJECT_UPDATE,
            ..answer(seq, id, "", Some(message))
        }
    }

    /// A Driver whose Updatable has started, and the commands its start
    /// emitted, with handles_updates.
    fn updatable() -> (Driver, (Vec<Command>, bool)) {
        let mut d = Driver::new();
        let a = Activation {
            time: 1_000,
            replaying: false,
            jobs: vec![start("Updatable", "null")],
        };
        let started = d.rt.activate(&d.reg, a);
        (d, started)
    }

    #[test]
    fn updates_run_their_handlers_and_answer() {
        let (mut d, started) = updatable();
        assert_eq!(started, (vec![named(WAIT_EVENT, 1, "stop", "")], true));
        let meddled = "durabox: the handler of query \"meddle\" called ctx.handle_update: a query only reads the orchestration's \
                       state, and may not use its Context or futures (nothing was scheduled; the instance goes on as before)";
        assert_eq!(d.rt.query("meddle", b"").0.unwrap_err().message, meddled);
        assert_eq!(
            d.activate(vec![update("add", "u1", "2")]),
            vec![named(SCHEDULE_ACTIVITY, 2, "Echo", "2")]
        );
        assert_eq!(
            d.activate(vec![resolve(JOB_RESOLVE_ACTIVITY, 2, "2")]),
            vec![answer(3, "u1", "2", None)]
        );
        // A handler's error answers its update; the instance goes on.
        d.activate(vec![update("add", "u2", "5")]);
        let failed = Job {
            failure: Some(Failure {
                message: "no echo".into(),
                details: String::new(),
            }),
            ..job(JOB_RESOLVE_ACTIVITY, 4)
        };
        assert_eq!(
            d.activate(vec![failed]),
            vec![answer(5, "u2", "", Some("activity \"Echo\" failed: no echo"))]
        );
        assert_eq!(d.rt.query("Nope", b"").2, vec!["add".to_string(), "sneaky".to_string()]);
        // stop comes while a handler runs: the orchestration waits for it
        // (all_handlers_finished), then completes, and takes no more.
        assert_eq!(
            d.activate(vec![update("add", "u3", "1")]),
            vec![named(SCHEDULE_ACTIVITY, 6, "Echo", "1")]
        );
        assert_eq!(d.activate(vec![resolve(JOB_RESOLVE_EVENT, 1, "")]), vec![]);
        let last = Activation {
            time: 2_000,
            replaying: false,
            jobs: vec![resolve(JOB_RESOLVE_ACTIVITY, 6, "1")],
        };
        assert_eq!(
            d.rt.activate(&d.reg, last),
            (vec![answer(7, "u3", "3", None), complete(8, "3")], false)
        );
    }

    #[test]
    fn updates_are_refused_alone() {
        for (name, input, message) in [
            ("add", "-1", "a negative number"),
            ("nope", "1", "durabox: the instance handles no update \"nope\" (it handles [add sneaky])"),
            (
                "add",
                "\"x\"",
                "update \"add\": input \"x\" does not decode into i64: expected a number, found a string",
            ),
            (
                "sneaky",
                "null",
                "durabox: the validator of update \"sneaky\" called ctx.timer: a validator only reads the orchestration's state, \
                 and may not use its Context or futures (nothing was scheduled; the instance goes on as before)",
            ),
        ] {
            let (mut d, _) = updatable();
            // The event and the update in one activation: the refusal is
            // its only command, and the orchestration does not run on.
            let got = d.activate(vec![resolve(JOB_RESOLVE_EVENT, 1, ""), update(name, "u", input)]);
            assert_eq!(got, vec![refusal(2, "u", message)], "{} {}", name, input);
        }
    }

    #[test]
    fn runs_activities() {
        let d = Driver::new();
        let req = |name: &str, input: &str| ActivityRequest {
            name: name.into(),
            input: input.as_bytes().to_vec(),
            instance_id: "i-1".into(),
            attempt: 1,
        };
        assert_eq!(
            d.reg.run_activity(req("SayHello", "\"ada\"")),
            Ok(b"\"Hello, ada!\"".to_vec())
        );
        assert_eq!(
            d.reg.run_activity(req("Nope", "")).unwrap_err().message,
            "this module registers no activity \"Nope\" (it registers [SayHello])"
        );
        assert_eq!(
            d.reg.run_activity(req("SayHello", "[]")).unwrap_err().message,
            "activity \"SayHello\": input [] does not decode into String: expected a string, found an array"
        );
    }
}
