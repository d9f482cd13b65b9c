//! The ABI's wire format (abi/ABI.md, "Encoding"): messages as fields keyed
//! by `number << 1 | wire type`, varints and length-prefixed bytes. Every
//! read is bounds-checked: a message that does not decode is an error that
//! says which field and why, never a panic or a read past its end. Unknown
//! fields are skipped, as the ABI requires.

use std::fmt;

/// Why a message did not decode.
#[derive(Debug, PartialEq)]
pub struct DecodeError(String);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

// Job kinds.
pub const JOB_START: u64 = 1;
pub const JOB_RESOLVE_ACTIVITY: u64 = 2;
pub const JOB_FIRE_TIMER: u64 = 3;
pub const JOB_RESOLVE_EVENT: u64 = 4;
pub const JOB_RESOLVE_CHILD: u64 = 5;
pub const JOB_CANCEL: u64 = 6;
pub const JOB_RESOLVE_RAISE: u64 = 7;
pub const JOB_UPDATE: u64 = 8;

// Command kinds.
pub const SCHEDULE_ACTIVITY: u64 = 1;
pub const START_TIMER: u64 = 2;
pub const COMPLETE: u64 = 3;
pub const FAIL: u64 = 4;
pub const CANCEL_TIMER: u64 = 5;
pub const CANCEL_ACTIVITY: u64 = 6;
pub const WAIT_EVENT: u64 = 7;
pub const WAIT_EVENT_PERSISTENT: u64 = 8;
pub const CANCEL_WAIT: u64 = 9;
pub const CONTINUE_AS_NEW: u64 = 10;
pub const START_CHILD: u64 = 11;
pub const CANCEL_CHILD: u64 = 12;
pub const SET_CUSTOM_STATUS: u64 = 13;
pub const PATCH: u64 = 14;
pub const RAISE: u64 = 15;
pub const COMPLETE_UPDATE: u64 = 16;
pub const REJECT_UPDATE: u64 = 17;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Failure {
    pub message: String,
    pub details: String,
}

#[derive(Debug, Default, PartialEq)]
pub struct Activation {
    pub time: i64,
    pub replaying: bool,
    pub jobs: Vec<Job>,
}

#[derive(Debug, Default, PartialEq)]
pub struct Job {
    pub kind: u64,
    pub seq: u64,
    pub name: String,
    pub instance_id: String,
    pub input: Vec<u8>,
    pub result: Vec<u8>,
    pub failure: Option<Failure>,
    pub update_id: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Command {
    pub kind: u64,
    pub seq: u64,
    pub name: String,
    pub input: Vec<u8>,
    pub delay: i64,
    pub output: Vec<u8>,
    pub failure: Option<Failure>,
    pub target: u64,
    pub instance_id: String,
    pub detached: bool,
    pub timeout: u64,
    pub persistent: bool,
    pub update_id: String,
}

#[derive(Debug, Default, PartialEq)]
pub struct ActivityRequest {
    pub name: String,
    pub input: Vec<u8>,
    pub instance_id: String,
    pub attempt: u64,
}

#[derive(Debug, Default, PartialEq)]
pub struct QueryRequest {
    pub name: String,
    pub input: Vec<u8>,
}

/// A field's value as read: a varint, or the bytes of a length-delimited one.
enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// The message being read, for errors.
    what: &'static str,
}

impl<'a> Reader<'a> {
    fn new(what: &'static str, buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0, what }
    }

    fn error(&self, why: String) -> DecodeError {
        DecodeError(format!("durabox: {} at byte {}: {}", self.what, self.pos, why))
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let b = *self
                .buf
                .get(self.pos)
                .ok_or_else(|| self.error("a varint runs past the end".into()))?;
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(self.error("a varint overflows 64 bits".into()));
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(self.error("a varint overflows 64 bits".into()))
    }

    /// The next field's number and value, or None at the end.
    fn field(&mut self) -> Result<Option<(u64, Value<'a>)>, DecodeError> {
        if self.pos == self.buf.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let value = match key & 1 {
            0 => Value::Varint(self.varint()?),
            _ => {
                let n = self.varint()?;
                let rest = self.buf.len() - self.pos;
                if n > rest as u64 {
                    return Err(self.error(format!("field {} says {} bytes, {} are left", key >> 1, n, rest)));
                }
                let b = &self.buf[self.pos..self.pos + n as usize];
                self.pos += n as usize;
                Value::Bytes(b)
            }
        };
        Ok(Some((key >> 1, value)))
    }

    /// Reads every field, giving each to f with its number; f says whether
    /// it knew the field.
    fn each(mut self, mut f: impl FnMut(&Self, u64, Value<'a>) -> Result<(), DecodeError>) -> Result<(), DecodeError> {
        while let Some((num, value)) = self.field()? {
            f(&self, num, value)?;
        }
        Ok(())
    }

    fn varint_of(&self, num: u64, v: Value<'a>) -> Result<u64, DecodeError> {
        match v {
            Value::Varint(n) => Ok(n),
            Value::Bytes(_) => Err(self.error(format!("field {} should be a varint", num))),
        }
    }

    fn bytes_of(&self, num: u64, v: Value<'a>) -> Result<&'a [u8], DecodeError> {
        match v {
            Value::Bytes(b) => Ok(b),
            Value::Varint(_) => Err(self.error(format!("field {} should be bytes", num))),
        }
    }

    fn string_of(&self, num: u64, v: Value<'a>) -> Result<String, DecodeError> {
        let b = self.bytes_of(num, v)?;
        String::from_utf8(b.to_vec()).map_err(|_| self.error(format!("field {} is not UTF-8", num)))
    }
}

fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

fn unzigzag(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

pub fn decode_activation(buf: &[u8]) -> Result<Activation, DecodeError> {
    let mut a = Activation::default();
    Reader::new("activation", buf).each(|r, num, v| {
        match num {
            1 => a.time = unzigzag(r.varint_of(num, v)?),
            2 => a.replaying = r.varint_of(num, v)? != 0,
            3 => a.jobs.push(decode_job(r.bytes_of(num, v)?)?),
            _ => {}
        }
        Ok(())
    })?;
    Ok(a)
}

fn decode_job(buf: &[u8]) -> Result<Job, DecodeError> {
    let mut j = Job::default();
    Reader::new("job", buf).each(|r, num, v| {
        match num {
            1 => j.kind = r.varint_of(num, v)?,
            2 => j.seq = r.varint_of(num, v)?,
            3 => j.name = r.string_of(num, v)?,
            4 => j.instance_id = r.string_of(num, v)?,
            5 => j.input = r.bytes_of(num, v)?.to_vec(),
            6 => j.result = r.bytes_of(num, v)?.to_vec(),
            7 => j.failure = Some(decode_failure(r.bytes_of(num, v)?)?),
            8 => j.update_id = r.string_of(num, v)?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(j)
}

fn decode_failure(buf: &[u8]) -> Result<Failure, DecodeError> {
    let mut f = Failure::default();
    Reader::new("failure", buf).each(|r, num, v| {
        match num {
            1 => f.message = r.string_of(num, v)?,
            2 => f.details = r.string_of(num, v)?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(f)
}

pub fn decode_activity_request(buf: &[u8]) -> Result<ActivityRequest, DecodeError> {
    let mut q = ActivityRequest::default();
    Reader::new("activity request", buf).each(|r, num, v| {
        match num {
            1 => q.name = r.string_of(num, v)?,
            2 => q.input = r.bytes_of(num, v)?.to_vec(),
            3 => q.instance_id = r.string_of(num, v)?,
            4 => q.attempt = r.varint_of(num, v)?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(q)
}

pub fn decode_query_request(buf: &[u8]) -> Result<QueryRequest, DecodeError> {
    let mut q = QueryRequest::default();
    Reader::new("query request", buf).each(|r, num, v| {
        match num {
            1 => q.name = r.string_of(num, v)?,
            2 => q.input = r.bytes_of(num, v)?.to_vec(),
            _ => {}
        }
        Ok(())
    })?;
    Ok(q)
}

/// Writes fields in field-number order, leaving zero values out.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn raw_varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn varint(&mut self, num: u64, v: u64) {
        if v != 0 {
            self.raw_varint(num << 1);
            self.raw_varint(v);
        }
    }

    /// A length-delimited field, written even when empty (a nested message
    /// that is present).
    fn always(&mut self, num: u64, b: &[u8]) {
        self.raw_varint(num << 1 | 1);
        self.raw_varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    fn bytes(&mut self, num: u64, b: &[u8]) {
        if !b.is_empty() {
            self.always(num, b);
        }
    }

    fn failure(&mut self, num: u64, f: &Option<Failure>) {
        if let Some(f) = f {
            let mut w = Writer::default();
            w.bytes(1, f.message.as_bytes());
            w.bytes(2, f.details.as_bytes());
            self.always(num, &w.0);
        }
    }
}

pub fn encode_command(c: &Command) -> Vec<u8> {
    let mut w = Writer::default();
    w.varint(1, c.kind);
    w.varint(2, c.seq);
    w.bytes(3, c.name.as_bytes());
    w.bytes(4, &c.input);
    w.varint(5, zigzag(c.delay));
    w.bytes(6, &c.output);
    w.failure(7, &c.failure);
    w.varint(8, c.target);
    w.bytes(9, c.instance_id.as_bytes());
    w.varint(10, c.detached as u64);
    w.varint(11, c.timeout);
    w.varint(12, c.persistent as u64);
    w.bytes(13, c.update_id.as_bytes());
    w.0
}

/// An ActivationResult: the commands, and whether an update could wake
/// the orchestration (handles_updates).
pub fn encode_activation_result(commands: &[Command], handles_updates: bool) -> Vec<u8> {
    let mut w = Writer::default();
    for c in commands {
        w.always(1, &encode_command(c));
    }
    w.varint(2, handles_updates as u64);
    w.0
}

/// A Manifest; the SDK delivers updates (field 4), so every module says so.
pub fn encode_manifest(sdk: &str, orchestrations: &[&str], activities: &[&str]) -> Vec<u8> {
    let mut w = Writer::default();
    w.bytes(1, sdk.as_bytes());
    for o in orchestrations {
        w.always(2, o.as_bytes());
    }
    for a in activities {
        w.always(3, a.as_bytes());
    }
    w.varint(4, 1);
    w.0
}

/// An ActivityResult or a QueryResult: the output, or the failure; a
/// QueryResult adds the names of the queries and of the updates handled.
pub fn encode_result(outcome: &Result<Vec<u8>, Failure>, handlers: &[&str], update_handlers: &[&str]) -> Vec<u8> {
    let mut w = Writer::default();
    match outcome {
        Ok(output) => w.bytes(1, output),
        Err(f) => w.failure(2, &Some(f.clone())),
    }
    for h in handlers {
        w.always(3, h.as_bytes());
    }
    for h in update_handlers {
        w.always(4, h.as_bytes());
    }
    w.0
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Encodes an activation as the host does, for the runtime's tests.
    pub(crate) fn encode_activation(a: &Activation) -> Vec<u8> {
        let mut w = Writer::default();
        w.raw_varint(1 << 1);
        w.raw_varint(zigzag(a.time));
        w.raw_varint(2 << 1);
        w.raw_varint(a.replaying as u64);
        for j in &a.jobs {
            let mut jw = Writer::default();
            jw.varint(1, j.kind);
            jw.varint(2, j.seq);
            jw.bytes(3, j.name.as_bytes());
            jw.bytes(4, j.instance_id.as_bytes());
            jw.bytes(5, &j.input);
            jw.bytes(6, &j.result);
            jw.failure(7, &j.failure);
            jw.bytes(8, j.update_id.as_bytes());
            w.always(3, &jw.0);
        }
        w.0
    }

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).unwrap())
            .collect()
    }

    // The example bytes of abi/ABI.md.
    const ACTIVATION: &str = "02 80 80 d0 e2 c6 bf ce 97 2f 04 00 07 1e 02 01
        07 08 47 72 65 65 74 69 6e 67 09 07 68 65 6c 6c
        6f 2d 31 0b 07 22 77 6f 72 6c 64 22";
    const RESULT: &str = "03 17 02 01 04 01 07 08 53 61 79 48 65 6c 6c 6f
        09 07 22 77 6f 72 6c 64 22";

    #[test]
    fn abi_example_bytes() {
        let a = decode_activation(&hex(ACTIVATION)).unwrap();
        let want = Activation {
            time: 1_700_000_000_000_000_000,
            replaying: false,
            jobs: vec![Job {
                kind: JOB_START,
                name: "Greeting".into(),
                instance_id: "hello-1".into(),
                input: b"\"world\"".to_vec(),
                ..Job::default()
            }],
        };
        assert_eq!(a, want);
        assert_eq!(encode_activation(&want), hex(ACTIVATION));
        let c = Command {
            kind: SCHEDULE_ACTIVITY,
            seq: 1,
            name: "SayHello".into(),
            input: b"\"world\"".to_vec(),
            ..Command::default()
        };
        assert_eq!(encode_activation_result(&[c], false), hex(RESULT));
    }

    #[test]
    fn update_fields() {
        // An Update job (kind 8) naming "add" with the argument 2 as "u1"
        // (field 8), and the answer: CompleteUpdate (kind 16) with the
        // update's id in field 13, and handles_updates (field 2) set.
        let a = decode_activation(&hex("07 0e 02 08 07 03 61 64 64 0b 01 32 11 02 75 31")).unwrap();
        let want = Job {
            kind: JOB_UPDATE,
            name: "add".into(),
            input: b"2".to_vec(),
            update_id: "u1".into(),
            ..Job::default()
        };
        assert_eq!(a.jobs, vec![want]);
        let c = Command {
            kind: COMPLETE_UPDATE,
            seq: 3,
            output: b"2".to_vec(),
            update_id: "u1".into(),
            ..Command::default()
        };
        assert_eq!(
            encode_activation_result(&[c], true),
            hex("03 0b 02 10 04 03 0d 01 32 1b 02 75 31 04 01")
        );
        // The manifest says updates (field 4); a query result lists the
        // update handlers in field 4.
        assert_eq!(encode_manifest("s", &[], &[]), hex("03 01 73 08 01"));
        assert_eq!(encode_result(&Ok(Vec::new()), &["q"], &["u"]), hex("07 01 71 09 01 75"));
    }

    #[test]
    fn zigzag_round_trips() {
        for n in [0, 1, -1, 63, -64, i64::MAX, i64::MIN] {
            assert_eq!(unzigzag(zigzag(n)), n);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn skips_unknown_fields() {
        // Field 9 as a varint and field 10 as bytes, before a known field.
        let buf = [9 << 1, 5, 10 << 1 | 1, 2, 0xff, 0xff, 1 << 1 | 1, 1, b'x'];
        assert_eq!(decode_query_request(&buf).unwrap().name, "x");
    }

    #[test]
    fn refuses_what_does_not_decode() {
        for (buf, want) in [
            (
                &[0x80u8][..],
                "durabox: query request at byte 1: a varint runs past the end",
            ),
            (
                &[0x03, 0x05, b'a'],
                "durabox: query request at byte 2: field 1 says 5 bytes, 1 are left",
            ),
            (
                &[0x02, 0x01],
                "durabox: query request at byte 2: field 1 should be bytes",
            ),
            (
                &[0x03, 0x01, 0xff],
                "durabox: query request at byte 3: field 1 is not UTF-8",
            ),
            (
                &[0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
                "durabox: query request at byte 11: a varint overflows 64 bits",
            ),
        ] {
            assert_eq!(decode_query_request(buf).unwrap_err().to_string(), want);
        }
        // A job that does not decode fails its activation, saying so.
        let err = decode_activation(&[0x04, 0x00, 0x07, 0x02, 0x07, 0x09]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "durabox: job at byte 2: field 3 says 9 bytes, 0 are left"
        );
    }

    /// Decodes ten thousand mutations of the example activation (bytes
    /// flipped, dropped, repeated), drawn from a fixed xorshift stream:
    /// each decodes or is refused, and none panics.
    #[test]
    fn decodes_mutations_without_panicking() {
        let base = hex(ACTIVATION);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..10_000 {
            let mut buf = base.clone();
            for _ in 0..1 + next() % 4 {
                let i = (next() % buf.len() as u64) as usize;
                match next() % 3 {
                    0 => buf[i] = next() as u8,
                    1 => {
                        buf.remove(i);
                    }
                    _ => buf.insert(i, buf[i]),
                }
                if buf.is_empty() {
                    break;
                }
            }
            let _ = decode_activation(&buf);
            let _ = decode_activity_request(&buf);
        }
    }

    #[test]
    fn decodes_every_prefix_without_panicking() {
        let buf = hex(ACTIVATION);
        for n in 0..buf.len() {
            let _ = decode_activation(&buf[..n]);
        }
    }
}
