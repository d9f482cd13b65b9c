//! hello, in Rust: the orchestration Greeting calls the activity SayHello
//! with its input and returns the greeting (examples/wasm/hello in Go).

use durabox::{ActivityInfo, Context, Error, Registry};

/// Greets name through the SayHello activity.
async fn greeting(ctx: Context, name: String) -> Result<String, Error> {
    ctx.call_activity("SayHello", &name).await
}

/// Returns a greeting for name.
fn say_hello(_: &ActivityInfo, name: String) -> Result<String, Error> {
    Ok(format!("Hello, {}!", name))
}

fn register(r: &mut Registry) {
    r.orchestration("Greeting", greeting);
    r.activity("SayHello", say_hello);
}

durabox::module!(register);
