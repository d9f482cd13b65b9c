//! approval, in Rust: a request waits for an Approval event, raised from
//! outside, or times out (examples/wasm/approval in Go, which it matches
//! command for command).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use durabox::json::{FromJson, Json, ToJson};
use durabox::{ActivityInfo, Context, Error, Registry};

/// What needs approving, and how long to wait for a decision (a Go
/// duration such as "24h" or "90m", as the Go example takes).
struct Request {
    item: String,
    timeout: String,
}

/// Fields left out decode as empty, as Go's encoding/json leaves them.
impl FromJson for Request {
    fn from_json(j: &Json) -> Result<Self, String> {
        Ok(Request {
            item: j.field::<Option<String>>("item")?.unwrap_or_default(),
            timeout: j.field::<Option<String>>("timeout")?.unwrap_or_default(),
        })
    }
}

/// The data of the Approval event.
#[derive(Clone)]
struct Decision {
    approved: bool,
    by: String,
}

impl FromJson for Decision {
    fn from_json(j: &Json) -> Result<Self, String> {
        Ok(Decision {
            approved: j.field::<Option<bool>>("approved")?.unwrap_or_default(),
            by: j.field::<Option<String>>("by")?.unwrap_or_default(),
        })
    }
}

impl ToJson for Decision {
    fn to_json(&self) -> Json {
        Json::object(vec![("approved", self.approved.to_json()), ("by", self.by.to_json())])
    }
}

/// Asks for a decision and acts on it, or gives up at the timeout. The
/// query Decision answers with the decision once there is one, null before.
async fn approval(ctx: Context, req: Request) -> Result<String, Error> {
    let decided: Rc<RefCell<Option<Decision>>> = Rc::default();
    let answer = decided.clone();
    ctx.handle_query("Decision", move |_: Json| Ok(answer.borrow().clone()));
    let timeout = parse_duration(&req.timeout)
        .ok_or_else(|| Error::msg(format!("timeout {:?} is not a duration such as 24h", req.timeout)))?;
    ctx.call_activity::<String>("Notify", &format!("please approve {}", req.item))
        .await?;
    ctx.set_custom_status(&format!("waiting for a decision on {}", req.item));
    let decision = ctx.wait_event::<Decision>("Approval");
    let timer = ctx.timer(timeout);
    if ctx.select(&[&decision, &timer]).await == 1 {
        let expired = format!("{}: no decision in {}, request expired", req.item, req.timeout);
        return ctx.call_activity("Notify", &expired).await;
    }
    let d = decision.await?;
    let verdict = if d.approved { "approved" } else { "rejected" };
    let message = format!("{} {} by {}", req.item, verdict, d.by);
    *decided.borrow_mut() = Some(d);
    ctx.call_activity("Notify", &message).await
}

/// Tells people; here it returns what it would say.
fn notify(_: &ActivityInfo, message: String) -> Result<String, Error> {
    Ok(message)
}

/// Parses a Go duration without a sign: numbers (with an optional
/// fraction), each followed by a unit of ns, us, µs, ms, s, m or h, such as
/// "1h30m" or "100ms"; "0" alone is zero.
fn parse_duration(s: &str) -> Option<Duration> {
    if s == "0" {
        return Some(Duration::ZERO);
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let number_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let number: f64 = rest[..number_len].parse().ok()?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let nanos = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += number * nanos;
        rest = &rest[unit_len..];
    }
    if s.is_empty() || total >= u64::MAX as f64 {
        return None;
    }
    Some(Duration::from_nanos(total as u64))
}

fn register(r: &mut Registry) {
    r.orchestration("Approval", approval);
    r.activity("Notify", notify);
}

durabox::module!(register);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        for (s, want) in [
            ("24h", Some(86_400_000)),
            ("100ms", Some(100)),
            ("1h30m", Some(5_400_000)),
            ("1.5s", Some(1_500)),
            ("0", Some(0)),
        ] {
            assert_eq!(parse_duration(s).map(|d| d.as_millis() as u64), want, "{}", s);
        }
        for s in ["", "h", "1", "1d", "-1h", "1..5s"] {
            assert_eq!(parse_duration(s), None, "{}", s);
        }
    }
}
