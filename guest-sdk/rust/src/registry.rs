//! [`Registry`]: the orchestrations and activities a module registers, by
//! name, and how each is called on JSON.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use crate::codec::{ActivityRequest, Failure};
use crate::json::{self, FromJson, ToJson};
use crate::{Context, Error};

/// An orchestration's future, on JSON.
pub(crate) type Run = Pin<Box<dyn Future<Output = Result<Vec<u8>, Error>>>>;
type OrchestrationFn = dyn Fn(Context, Vec<u8>) -> Run;
type ActivityFn = dyn Fn(&ActivityInfo, &[u8]) -> Result<Vec<u8>, Error>;

/// Describes the activity attempt running.
#[derive(Clone, Debug)]
pub struct ActivityInfo {
    /// The activity's name.
    pub name: String,
    /// The orchestration instance that called it.
    pub instance_id: String,
    /// Counts deliveries of this call, from 1. Above 1, an earlier one may
    /// have run, in part or whole, before a crash: activities run at least
    /// once, so make them safe to run twice.
    pub attempt: u64,
}

/// The orchestrations and activities of a module, by name: the function
/// given to [`module!`](crate::module) fills it.
#[derive(Default)]
pub struct Registry {
    orchestrations: BTreeMap<String, Rc<OrchestrationFn>>,
    activities: BTreeMap<String, Box<ActivityFn>>,
}

/// f, an async function of the Context and its input (an orchestration,
/// an update's handler), on JSON: its input decoded for what
/// (`orchestration "X"`), which fails the future when it does not decode,
/// and its output encoded.
pub(crate) fn on_json<I, O, F, Fut>(what: String, f: F) -> impl Fn(Context, Vec<u8>) -> Run
where
    I: FromJson + 'static,
    O: ToJson + 'static,
    F: Fn(Context, I) -> Fut + 'static,
    Fut: Future<Output = Result<O, Error>> + 'static,
{
    move |ctx: Context, raw: Vec<u8>| -> Run {
        match input::<I>(&what, &raw) {
            Ok(i) => {
                let fut = f(ctx, i);
                Box::pin(async move { fut.await.map(|o| json::to_vec(&o)) })
            }
            Err(e) => Box::pin(async move { Err(e) }),
        }
    }
}

/// Decodes an input for what (`orchestration "X"`), saying why not.
pub(crate) fn input<I: FromJson>(what: &str, raw: &[u8]) -> Result<I, Error> {
    json::from_slice(raw).map_err(|e| {
        Error::Invalid(format!(
            "{}: input {} does not decode into {}: {}",
            what,
            String::from_utf8_lossy(raw),
            json::type_name::<I>(),
            e
        ))
    })
}

impl Registry {
    /// Registers `f` as the orchestration `name`: an async function of the
    /// [`Context`] and its input (decoded from JSON) that returns its result
    /// (encoded to JSON) or an error that fails the instance. It panics if
    /// the name is taken; a host refuses a module whose names break its
    /// rule (1 to 256 bytes of UTF-8, no control characters), naming them.
    pub fn orchestration<I, O, F, Fut>(&mut self, name: &str, f: F) -> &mut Self
    where
        I: FromJson + 'static,
        O: ToJson + 'static,
        F: Fn(Context, I) -> Fut + 'static,
        Fut: Future<Output = Result<O, Error>> + 'static,
    {
        assert!(
            !self.orchestrations.contains_key(name),
            "durabox: orchestration {:?} is registered twice",
            name
        );
        let run = on_json(format!("orchestration {:?}", name), f);
        self.orchestrations.insert(name.to_string(), Rc::new(run));
        self
    }

    /// Registers `f` as the activity `name`: a function of the attempt's
    /// [`ActivityInfo`] and its input that returns its output or an error
    /// that fails the call. Activities run in their own instances with the
    /// real clock and real randomness: do I/O here, never in an
    /// orchestration. It panics if the name is taken.
    pub fn activity<I, O, F>(&mut self, name: &str, f: F) -> &mut Self
    where
        I: FromJson + 'static,
        O: ToJson + 'static,
        F: Fn(&ActivityInfo, I) -> Result<O, Error> + 'static,
    {
        assert!(
            !self.activities.contains_key(name),
            "durabox: activity {:?} is registered twice",
            name
        );
        let what = format!("activity {:?}", name);
        let run = move |info: &ActivityInfo, raw: &[u8]| f(info, input::<I>(&what, raw)?).map(|o| json::to_vec(&o));
        self.activities.insert(name.to_string(), Box::new(run));
        self
    }

    pub(crate) fn orchestration_names(&self) -> Vec<&str> {
        self.orchestrations.keys().map(String::as_str).collect()
    }

    pub(crate) fn activity_names(&self) -> Vec<&str> {
        self.activities.keys().map(String::as_str).collect()
    }

    /// Starts the orchestration `name` on `ctx` with its input, if the
    /// module registers it.
    pub(crate) fn orchestration_fn(&self, name: &str) -> Option<Rc<OrchestrationFn>> {
        self.orchestrations.get(name).cloned()
    }

    /// Runs one attempt of the activity the request names.
    pub(crate) fn run_activity(&self, req: ActivityRequest) -> Result<Vec<u8>, Failure> {
        let f = self.activities.get(&req.name).ok_or_else(|| Failure {
            message: format!(
                "this module registers no activity {:?} (it registers [{}])",
                req.name,
                self.activity_names().join(" ")
            ),
            details: String::new(),
        })?;
        let info = ActivityInfo {
            name: req.name,
            instance_id: req.instance_id,
            attempt: req.attempt,
        };
        f(&info, &req.input).map_err(|e| e.failure())
    }
}
