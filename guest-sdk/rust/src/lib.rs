//! The Durabox guest SDK for Rust: orchestrations and activities compiled
//! to a WebAssembly module (`wasm32-wasip1`, `wasm32-wasi` before Rust
//! 1.78) that a Durabox host runs durably: every step is recorded, and
//! after a crash the orchestration is replayed from its history and goes
//! on where it was.
//!
//! # A module
//!
//! ```ignore
//! use durabox::{ActivityInfo, Context, Error, Registry};
//!
//! async fn greeting(ctx: Context, name: String) -> Result<String, Error> {
//!     ctx.call_activity("SayHello", &name).await
//! }
//!
//! fn say_hello(_: &ActivityInfo, name: String) -> Result<String, Error> {
//!     Ok(format!("Hello, {}!", name))
//! }
//!
//! fn register(r: &mut Registry) {
//!     r.orchestration("Greeting", greeting);
//!     r.activity("SayHello", say_hello);
//! }
//!
//! durabox::module!(register);
//! ```
//!
//! Build it as a `cdylib` for `wasm32-wasip1`; the crate's README has the
//! author's path (write, build, check, deploy, test).
//!
//! # The model
//!
//! An orchestration is an `async fn` of a [`Context`] and its input. Each
//! operation it starts (an activity, a timer, an event wait, a child, a
//! raise) emits a command at once and returns an [`Op`], a future that
//! resolves when the host delivers the operation's outcome, recorded in
//! history. The crate's own executor, single-threaded and std only, runs
//! the orchestration and its branches ([`Context::spawn`]) until none can
//! progress, then hands the host the commands emitted; the host records
//! them and, when an outcome arrives, calls again. [`Context::select`]
//! races operations and cancels the losers; [`all`] joins them in order.
//! [`Context::handle_query`] answers queries from the orchestration's
//! state; [`Context::handle_update`] takes updates, each handler running
//! as a branch of its own whose answer is recorded.
//!
//! # Orchestrations are replayed
//!
//! After a restart, or when the host drops an instance from memory, the
//! orchestration runs again from the beginning against its history, and
//! must make the same calls in the same order. The sandbox makes the usual
//! sources of nondeterminism safe inside a module: `SystemTime::now()` is
//! the logical time ([`Context::now`]), randomness repeats, there are no
//! files, sockets, environment or arguments, and what the orchestration
//! prints is dropped while it replays. What remains the author's:
//!
//! - I/O and side effects go in activities, never in the orchestration.
//! - Wait only on the crate's futures ([`Op`], [`Branch`], [`Select`] and
//!   what is built of them): a future of another runtime never wakes, and
//!   the instance then fails as waiting on nothing. A `HashMap`'s order
//!   replays (its seed comes from the instance's random stream, which the
//!   host repeats) but differs between instances: use a `BTreeMap` where
//!   the order decides anything.
//! - Changing the order or arguments of operations changes the
//!   orchestration: an instance runs on the module it started with until
//!   `durabox upgrade` moves it to one that replays its history.
//! - A panic traps (Rust's wasm targets abort on panic), which fails the
//!   instance with the panic's message in the host's log; return an
//!   [`Error`] instead.

mod codec;
mod context;
mod error;
mod executor;
#[doc(hidden)]
pub mod exports;
pub mod json;
mod op;
mod patch;
mod registry;
mod runtime;
mod update;

pub use context::Context;
pub use error::Error;
pub use op::{all, Branch, Op, Select, Selectable};
pub use registry::{ActivityInfo, Registry};
pub use update::UpdateHandler;

/// Defines the module's exports (abi/ABI.md), given the function that
/// registers its orchestrations and activities: put it once in the
/// module's crate, at its root.
///
/// ```ignore
/// durabox::module!(register);
/// ```
#[macro_export]
macro_rules! module {
    ($register:path) => {
        #[no_mangle]
        pub extern "C" fn durabox_abi_version() -> i32 {
            $crate::exports::abi_version()
        }

        #[no_mangle]
        pub extern "C" fn durabox_alloc(size: i32) -> i32 {
            $crate::exports::alloc(size)
        }

        #[no_mangle]
        pub extern "C" fn durabox_describe() -> i64 {
            $crate::exports::describe($register)
        }

        #[no_mangle]
        pub extern "C" fn durabox_activate(addr: i32, len: i32) -> i64 {
            $crate::exports::activate($register, addr, len)
        }

        #[no_mangle]
        pub extern "C" fn durabox_activity(addr: i32, len: i32) -> i64 {
            $crate::exports::activity($register, addr, len)
        }

        #[no_mangle]
        pub extern "C" fn durabox_query(addr: i32, len: i32) -> i64 {
            $crate::exports::query($register, addr, len)
        }
    };
}
