//! The ABI's exports, behind the functions [`module!`](crate::module)
//! defines: the module's memory holds one request buffer the host writes
//! into (durabox_alloc) and the last response, kept until the next call.
//! A wasm instance runs one orchestration instance, or serves activities.

use std::cell::RefCell;
use std::rc::Rc;

use crate::codec;
use crate::registry::Registry;
use crate::runtime::Runtime;

/// The ABI version this crate speaks.
const ABI_VERSION: i32 = 1;

/// The SDK's name and version, in the module's manifest (Cargo.toml's
/// version: the Makefile builds without cargo, which would set it).
const SDK: &str = "durabox-rust/0.1.0";

#[derive(Default)]
struct Guest {
    registry: Option<Rc<Registry>>,
    runtime: Option<Runtime>,
    /// The buffer the host last allocated, and the last response.
    input: Vec<u8>,
    output: Vec<u8>,
}

thread_local! {
    static GUEST: RefCell<Guest> = RefCell::new(Guest::default());
}

fn registry(register: fn(&mut Registry)) -> Rc<Registry> {
    GUEST.with(|g| {
        g.borrow_mut()
            .registry
            .get_or_insert_with(|| {
                let mut r = Registry::default();
                register(&mut r);
                Rc::new(r)
            })
            .clone()
    })
}

/// The address of a byte slice, as the guest's 32-bit memory numbers it.
fn address(b: &[u8]) -> i32 {
    b.as_ptr() as usize as i32
}

/// Takes the bytes the host wrote into the buffer it allocated; a region
/// it did not allocate is a host's bug, which traps.
fn request(addr: i32, len: i32) -> Vec<u8> {
    GUEST.with(|g| {
        let g = g.borrow();
        match usize::try_from(len) {
            Ok(n) if n <= g.input.len() && addr == address(&g.input) => g.input[..n].to_vec(),
            _ => panic!("durabox: the host passed a region it did not allocate with durabox_alloc"),
        }
    })
}

/// Keeps b as the response and returns its packed region: the address in
/// the high 32 bits, the length in the low.
fn respond(b: Vec<u8>) -> i64 {
    GUEST.with(|g| {
        let mut g = g.borrow_mut();
        g.output = b;
        if g.output.is_empty() {
            return 0;
        }
        ((address(&g.output) as u32 as u64) << 32 | g.output.len() as u64) as i64
    })
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

pub fn abi_version() -> i32 {
    ABI_VERSION
}

pub fn alloc(size: i32) -> i32 {
    GUEST.with(|g| {
        let mut g = g.borrow_mut();
        let n = usize::try_from(size).unwrap_or(0).max(1);
        g.input.clear();
        g.input.resize(n, 0);
        address(&g.input)
    })
}

pub fn describe(register: fn(&mut Registry)) -> i64 {
    let reg = registry(register);
    respond(codec::encode_manifest(
        SDK,
        &reg.orchestration_names(),
        &reg.activity_names(),
    ))
}

pub fn activate(register: fn(&mut Registry), addr: i32, len: i32) -> i64 {
    let reg = registry(register);
    let a = codec::decode_activation(&request(addr, len))
        .unwrap_or_else(|e| panic!("durabox: the host sent an activation that does not decode: {}", e));
    // The host counts a module's loops with sched_yield, which the ABI
    // requires every module to import: std's yield_now is that import.
    std::thread::yield_now();
    let mut rt = GUEST
        .with(|g| g.borrow_mut().runtime.take())
        .unwrap_or_else(Runtime::new);
    let (commands, handles_updates) = rt.activate(&reg, a);
    GUEST.with(|g| g.borrow_mut().runtime = Some(rt));
    respond(codec::encode_activation_result(&commands, handles_updates))
}

pub fn activity(register: fn(&mut Registry), addr: i32, len: i32) -> i64 {
    let reg = registry(register);
    let req = codec::decode_activity_request(&request(addr, len))
        .unwrap_or_else(|e| panic!("durabox: the host sent an activity request that does not decode: {}", e));
    respond(codec::encode_result(&reg.run_activity(req), &[], &[]))
}

pub fn query(register: fn(&mut Registry), addr: i32, len: i32) -> i64 {
    registry(register);
    let req = codec::decode_query_request(&request(addr, len))
        .unwrap_or_else(|e| panic!("durabox: the host sent a query that does not decode: {}", e));
    let rt = GUEST
        .with(|g| g.borrow_mut().runtime.take())
        .unwrap_or_else(Runtime::new);
    let (outcome, queries, updates) = rt.query(&req.name, &req.input);
    GUEST.with(|g| g.borrow_mut().runtime = Some(rt));
    respond(codec::encode_result(&outcome, &strs(&queries), &strs(&updates)))
}
