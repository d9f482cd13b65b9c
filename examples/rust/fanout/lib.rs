//! fanout, in Rust: one activity per item, all started at once, joined in
//! the order of the items whatever order they finish in
//! (examples/wasm/fanout in Go).

use std::time::Duration;

use durabox::{ActivityInfo, Context, Error, Registry};

/// Counts the words of every document at once and sums them.
async fn word_count(ctx: Context, documents: Vec<String>) -> Result<i64, Error> {
    // Each call emits its command as it is made: all are scheduled before
    // any is awaited.
    let counts = durabox::all(documents.iter().map(|d| ctx.call_activity::<i64>("Count", d))).await?;
    Ok(counts.iter().sum())
}

/// Counts a document's words; longer documents take longer.
fn count(_: &ActivityInfo, document: String) -> Result<i64, Error> {
    let words = document.split_whitespace().count();
    std::thread::sleep(Duration::from_millis(words as u64));
    Ok(words as i64)
}

fn register(r: &mut Registry) {
    r.orchestration("WordCount", word_count);
    r.activity("Count", count);
}

durabox::module!(register);
