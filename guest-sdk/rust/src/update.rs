//! Updates (abi/ABI.md, "Updates"): [`Context::handle_update`] registers a
//! handler by name, with an optional validator; an Update job refuses the
//! update or starts its handler as a task of its own, whose answer is a
//! CompleteUpdate command.

use std::collections::BTreeMap;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll, Waker};

use crate::codec::{self, Command, Failure, Job};
use crate::executor::{register, wake_all, Task};
use crate::json::{FromJson, ToJson};
use crate::registry::{input, on_json, Run};
use crate::runtime::Shared;
use crate::{Context, Error};

type HandlerFn = dyn Fn(Context, Vec<u8>) -> Run;
type ValidatorFn = dyn Fn(&[u8]) -> Result<(), Error>;

/// An update's handler and its validator, on JSON.
struct Handler {
    run: Rc<HandlerFn>,
    validate: Option<Rc<ValidatorFn>>,
}

/// The update handlers of an instance, and those of its handlers running.
#[derive(Default)]
pub(crate) struct Updates {
    handlers: BTreeMap<String, Handler>,
    /// How many handlers began and have not returned, and the tasks waiting
    /// for none to run (all_handlers_finished).
    running: usize,
    waiting: Vec<Waker>,
}

impl Updates {
    /// Whether a handler is registered.
    pub(crate) fn any(&self) -> bool {
        !self.handlers.is_empty()
    }

    /// The names of the handlers registered, sorted.
    pub(crate) fn names(&self) -> Vec<String> {
        self.handlers.keys().cloned().collect()
    }
}

/// An update handler just registered with
/// [`Context::handle_update`]: [`validator`](UpdateHandler::validator)
/// gives it a validator.
pub struct UpdateHandler<I> {
    shared: Rc<Shared>,
    /// The update's name; None when the handler was not registered (code
    /// that only reads tried to), so that no validator is given to another.
    name: Option<String>,
    _i: PhantomData<fn(I)>,
}

impl<I: FromJson + 'static> UpdateHandler<I> {
    /// Gives the handler a validator: `check` runs first, when the update
    /// arrives, with its argument, and an error from it refuses the update,
    /// which then leaves no trace in history (the caller gets the error).
    /// Like a query's handler, it only reads what it captures: one that uses
    /// the Context refuses the update. It must decide by the orchestration's
    /// state and the argument alone, since it runs again, and must accept
    /// again, each time the history that accepted the update is replayed.
    pub fn validator<F>(self, check: F) -> Self
    where
        F: Fn(&I) -> Result<(), Error> + 'static,
    {
        let name = match &self.name {
            Some(name) => name,
            None => return self,
        };
        let what = format!("update {:?}", name);
        let validate = move |raw: &[u8]| check(&input::<I>(&what, raw)?);
        if let Some(h) = self.shared.updates.borrow_mut().handlers.get_mut(name) {
            h.validate = Some(Rc::new(validate));
        }
        self
    }
}

impl Context {
    /// Registers `handler` as the handler of the update `name` for this
    /// instance: a client's `durabox update ID NAME --data JSON` (or the
    /// HTTP API's `POST /v1/instances/{id}/updates/{name}`) runs it with
    /// its argument, decoded as `I`, and gets its answer, encoded from
    /// `O`, or its error, on the same call. Registering a name again
    /// replaces its handler; [`UpdateHandler::validator`] gives it a
    /// validator.
    ///
    /// An update is recorded in history (its acceptance, then its answer)
    /// and replayed like everything else. The handler runs as a branch of
    /// the orchestration (as [`spawn`](Context::spawn) starts one) from the
    /// step that delivers the update: it may call activities, sleep, wait
    /// and start children through its Context, and change what it shares
    /// with the orchestration (`Rc<RefCell<…>>`); its answer is recorded
    /// when it returns. An error answers the update with that error, and
    /// the instance goes on. An update the instance has no handler of is
    /// refused, as is one the validator refuses: neither leaves a trace.
    /// The orchestration's end, or its continuing as new, answers the
    /// updates whose handlers have not returned with an error: await
    /// [`all_handlers_finished`](Context::all_handlers_finished) first.
    ///
    /// ```ignore
    /// let items = Rc::new(RefCell::new(Vec::<String>::new()));
    /// let list = items.clone();
    /// ctx.handle_update("Add", move |ctx: Context, item: String| {
    ///     let list = list.clone();
    ///     async move {
    ///         ctx.call_activity::<()>("Reserve", &item).await?;
    ///         list.borrow_mut().push(item);
    ///         Ok(list.borrow().len())
    ///     }
    /// })
    /// .validator(|item: &String| match item.is_empty() {
    ///     true => Err(Error::msg("an item needs a name")),
    ///     false => Ok(()),
    /// });
    /// ```
    pub fn handle_update<I, O, F, Fut>(&self, name: &str, handler: F) -> UpdateHandler<I>
    where
        I: FromJson + 'static,
        O: ToJson + 'static,
        F: Fn(Context, I) -> Fut + 'static,
        Fut: Future<Output = Result<O, Error>> + 'static,
    {
        let registered = self.shared.allowed("ctx.handle_update");
        if registered {
            let h = Handler {
                run: Rc::new(on_json(format!("update {:?}", name), handler)),
                validate: None,
            };
            self.shared.updates.borrow_mut().handlers.insert(name.to_string(), h);
        }
        UpdateHandler {
            shared: self.shared.clone(),
            name: registered.then(|| name.to_string()),
            _i: PhantomData,
        }
    }

    /// Resolves once no update handler that began is running. An
    /// orchestration that ends or continues as new answers the updates
    /// whose handlers run with an error; to let them finish first:
    ///
    /// ```ignore
    /// ctx.all_handlers_finished().await;
    /// Err(ctx.continue_as_new(&state))
    /// ```
    pub fn all_handlers_finished(&self) -> impl Future<Output = ()> {
        self.shared.allowed("ctx.all_handlers_finished");
        HandlersFinished {
            shared: self.shared.clone(),
        }
    }
}

/// The future of [`Context::all_handlers_finished`].
struct HandlersFinished {
    shared: Rc<Shared>,
}

impl Future for HandlersFinished {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        let mut u = self.shared.updates.borrow_mut();
        if u.running == 0 {
            return Poll::Ready(());
        }
        register(&mut u.waiting, cx.waker());
        Poll::Pending
    }
}

/// Applies the delivery of an update, j: refuses it when the instance has
/// no handler of its name or the handler's validator refuses it, and
/// otherwise returns the task that runs the handler and answers the update.
pub(crate) fn deliver(shared: &Rc<Shared>, j: Job) -> Option<Task> {
    let found = {
        let u = shared.updates.borrow();
        u.handlers.get(&j.name).map(|h| (h.run.clone(), h.validate.clone()))
    };
    let refuse = |failure: Failure| {
        shared.refuse(Command {
            kind: codec::REJECT_UPDATE,
            update_id: j.update_id.clone(),
            failure: Some(failure),
            ..Command::default()
        })
    };
    let (run, validate) = match found {
        Some(h) => h,
        None => {
            let names = shared.updates.borrow().names();
            refuse(Failure {
                message: format!(
                    "durabox: the instance handles no update {:?} (it handles [{}])",
                    j.name,
                    names.join(" ")
                ),
                details: String::new(),
            });
            return None;
        }
    };
    if let Some(check) = validate {
        let what = format!("the validator of update {:?}", j.name);
        if let Err(f) = shared.read_only(&what, "a validator", || check(&j.input).map(|()| Vec::new())) {
            refuse(f);
            return None;
        }
    }
    let answer = run(Context { shared: shared.clone() }, j.input);
    shared.updates.borrow_mut().running += 1;
    let (me, id) = (shared.clone(), j.update_id);
    Some(Box::pin(async move {
        let (output, failure) = match answer.await {
            Ok(output) => (output, None),
            Err(e) => (Vec::new(), Some(e.failure())),
        };
        {
            let mut u = me.updates.borrow_mut();
            u.running -= 1;
            if u.running == 0 {
                wake_all(&mut u.waiting);
            }
        }
        me.command(Command {
            kind: codec::COMPLETE_UPDATE,
            update_id: id,
            output,
            failure,
            ..Command::default()
        });
    }))
}
