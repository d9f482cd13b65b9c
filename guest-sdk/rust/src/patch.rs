//! [`Context::patched`]: asking whether the orchestration takes a change's
//! new path (abi/ABI.md, "Patches").

use crate::codec::{self, Command};
use crate::Context;

impl Context {
    /// Whether this instance runs the code of the change `id`, so that code
    /// that changed can keep the old path for instances that took it before
    /// the change existed:
    ///
    /// ```ignore
    /// if ctx.patched("charge-in-cents") {
    ///     ctx.call_activity::<()>("ChargeCents", &order.cents).await?;
    /// } else {
    ///     ctx.call_activity::<()>("Charge", &order.amount).await?;
    /// }
    /// ```
    ///
    /// True when the step is new, and when the step's history recorded the
    /// change; false when the orchestration replays a step that ran before
    /// the change existed. The first answer for an id holds for the rest of
    /// the execution, and a true one is recorded (a `Patch` command), so
    /// replays repeat it. Once no instance can have taken the old path,
    /// drop the question and keep the new path. It panics on an empty id.
    pub fn patched(&self, id: &str) -> bool {
        assert!(!id.is_empty(), "durabox: patched needs a change id");
        if !self.shared.allowed("ctx.patched") {
            return false;
        }
        if let Some(&v) = self.shared.state.borrow().patched.get(id) {
            return v;
        }
        let v = ask(self, id);
        self.shared.state.borrow_mut().patched.insert(id.to_string(), v);
        if v {
            self.shared.command(Command {
                kind: codec::PATCH,
                name: id.to_string(),
                ..Command::default()
            });
        }
        v
    }
}

/// Asks the host, which knows what the step's history records: the
/// activation does not say, so that it is the same live and on replay.
#[cfg(target_arch = "wasm32")]
fn ask(_: &Context, id: &str) -> bool {
    #[link(wasm_import_module = "durabox")]
    extern "C" {
        fn patched(addr: i32, len: i32) -> i32;
    }
    // The host reads the id's bytes, which live through the call.
    unsafe { patched(id.as_ptr() as usize as i32, id.len() as i32) == 1 }
}

/// Natively (the crate's tests), the host's answer for a step that history
/// did not record: a new step takes the new path, a replayed one does not.
#[cfg(not(target_arch = "wasm32"))]
fn ask(ctx: &Context, _: &str) -> bool {
    !ctx.shared.state.borrow().replaying
}
