//! The Rust SDK's conformance module: the orchestrations and activities
//! docs/conformance.md specifies, which the guest conformance kit
//! (host/guestkit, durabox conformance) runs on the real host and on the
//! raw ABI. Each does what examples/conformance/go does, in Rust's terms.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use durabox::json::{Json, ToJson};
use durabox::{ActivityInfo, Context, Error, Registry};

const HOUR: Duration = Duration::from_secs(3600);

/// Returns its input unchanged.
fn echo(_: &ActivityInfo, v: Json) -> Result<Json, Error> {
    Ok(v)
}

/// Fails with "boom: " and its input.
fn boom(_: &ActivityInfo, s: String) -> Result<Json, Error> {
    Err(Error::msg(format!("boom: {}", s)))
}

/// Calls Echo with each string in turn.
async fn sequence(ctx: Context, input: Vec<String>) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    for s in &input {
        out.push(ctx.call_activity::<String>("Echo", s).await?);
    }
    Ok(out)
}

/// Calls Echo with 0 to n-1 at once and waits for all.
async fn fan_out(ctx: Context, n: i64) -> Result<Vec<i64>, Error> {
    durabox::all((0..n).map(|i| ctx.call_activity::<i64>("Echo", &i))).await
}

/// Fails with Boom's failure.
async fn fails(ctx: Context, s: String) -> Result<Json, Error> {
    ctx.call_activity("Boom", &s).await
}

/// Sleeps for seconds and answers how long the clock says it slept.
async fn timer(ctx: Context, seconds: u64) -> Result<u64, Error> {
    let start = ctx.now();
    ctx.timer(Duration::from_secs(seconds)).await?;
    Ok(ctx.now().duration_since(start).map_or(0, |d| d.as_secs()))
}

/// Races an activity against an hour's timer.
async fn race(ctx: Context, _: Json) -> Result<Json, Error> {
    let call = ctx.call_activity::<Json>("Echo", "fast");
    let timer = ctx.timer(HOUR);
    if ctx.select(&[&call, &timer]).await == 1 {
        return Ok("timer".to_json());
    }
    call.await
}

/// Waits for a positional and a persistent event.
async fn events(ctx: Context, _: Json) -> Result<Vec<Json>, Error> {
    let first = ctx.wait_event::<Json>("first");
    let second = ctx.wait_event_persistent::<Json>("second");
    durabox::all(vec![first, second]).await
}

/// Waits for the event go and answers its data.
async fn waiter(ctx: Context, _: Json) -> Result<Json, Error> {
    ctx.wait_event("go").await
}

/// Opens one operation of every kind and waits for the activity, which
/// the kit cancels before it runs.
async fn cancellable(ctx: Context, _: Json) -> Result<Json, Error> {
    let call = ctx.call_activity::<Json>("Echo", "never");
    let _timer = ctx.timer(HOUR);
    let _event = ctx.wait_event::<Json>("never");
    let _persistent = ctx.wait_event_persistent::<Json>("never-persistent");
    let _child = ctx.call_child::<Json>("Waiter", &Json::Null, None);
    call.await
}

/// Starts an attached Sequence and a detached Waiter, and answers the
/// Sequence's result.
async fn parent(ctx: Context, s: String) -> Result<Json, Error> {
    let child = ctx.call_child::<Json>("Sequence", &vec![s], None);
    ctx.start_detached("Waiter", &Json::Null, Some(&format!("{}-waiter", ctx.instance_id())))?;
    child.await
}

/// Echoes n and continues as new with n-1 until 0.
async fn countdown(ctx: Context, n: i64) -> Result<String, Error> {
    ctx.call_activity::<i64>("Echo", &n).await?;
    if n > 0 {
        return Err(ctx.continue_as_new(&(n - 1)));
    }
    Ok("liftoff".to_string())
}

/// Sets its status, asks about a patch and echoes which path it took.
async fn status(ctx: Context, _: Json) -> Result<String, Error> {
    ctx.set_custom_status("working");
    let path = if ctx.patched("kit-change") {
        "patched"
    } else {
        "unpatched"
    };
    let r = ctx.call_activity::<String>("Echo", path).await?;
    ctx.set_custom_status("done");
    Ok(r)
}

/// Raises go to the instance target and answers whether it was delivered.
async fn raiser(ctx: Context, target: String) -> Result<bool, Error> {
    match ctx.raise(&target, "go", "raised", false).await {
        Ok(()) => Ok(true),
        Err(Error::Raise { .. }) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Answers the query state while it waits for set and stop.
async fn queryable(ctx: Context, _: Json) -> Result<Json, Error> {
    let state = Rc::new(RefCell::new("initial".to_json()));
    let answer = state.clone();
    ctx.handle_query("state", move |_: Json| Ok(answer.borrow().clone()));
    let set = ctx.wait_event::<Json>("set").await?;
    *state.borrow_mut() = set;
    ctx.wait_event::<Json>("stop").await?;
    let end = state.borrow().clone();
    Ok(end)
}

/// Takes the update add: its validator refuses a negative number, its
/// handler echoes the number and adds it to the sum, answering the sum; it
/// completes with the sum on the event stop.
async fn updatable(ctx: Context, _: Json) -> Result<i64, Error> {
    let sum = Rc::new(Cell::new(0i64));
    let total = sum.clone();
    ctx.handle_update("add", move |ctx: Context, n: i64| {
        let total = total.clone();
        async move {
            let echoed = ctx.call_activity::<i64>("Echo", &n).await?;
            total.set(total.get() + echoed);
            Ok(total.get())
        }
    })
    .validator(|n: &i64| match *n < 0 {
        true => Err(Error::msg("a negative number")),
        false => Ok(()),
    });
    ctx.wait_event::<Json>("stop").await?;
    Ok(sum.get())
}

fn register(r: &mut Registry) {
    r.activity("Echo", echo);
    r.activity("Boom", boom);
    r.orchestration("Sequence", sequence);
    r.orchestration("FanOut", fan_out);
    r.orchestration("Fails", fails);
    r.orchestration("Timer", timer);
    r.orchestration("Race", race);
    r.orchestration("Events", events);
    r.orchestration("Waiter", waiter);
    r.orchestration("Cancellable", cancellable);
    r.orchestration("Parent", parent);
    r.orchestration("Countdown", countdown);
    r.orchestration("Status", status);
    r.orchestration("Raiser", raiser);
    r.orchestration("Queryable", queryable);
    r.orchestration("Updatable", updatable);
}

durabox::module!(register);
