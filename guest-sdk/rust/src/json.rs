//! JSON without dependencies: every input, result, event and query answer
//! crosses the ABI as JSON bytes, and the crate builds offline, on std
//! alone, so it carries the little JSON it needs.
//!
//! [`Json`] is a parsed value; [`ToJson`] and [`FromJson`] turn Rust values
//! into one and back. They are implemented for `()`, `bool`, the integer
//! types, `f64`, `String` (`&str` and `str` to encode), `Vec<T>`,
//! `Option<T>` and `Json` itself; implement them for your own types with
//! [`Json::object`] and [`Json::field`]:
//!
//! ```
//! use durabox::json::{FromJson, Json, ToJson};
//!
//! struct Decision { approved: bool, by: String }
//!
//! impl ToJson for Decision {
//!     fn to_json(&self) -> Json {
//!         Json::object(vec![("approved", self.approved.to_json()), ("by", self.by.to_json())])
//!     }
//! }
//!
//! impl FromJson for Decision {
//!     fn from_json(j: &Json) -> Result<Self, String> {
//!         Ok(Decision { approved: j.field("approved")?, by: j.field("by")? })
//!     }
//! }
//! ```
//!
//! The bytes written are what Go's `encoding/json` writes for the same
//! value (compact; `<`, `>`, `&`, U+2028 and U+2029 escaped; object fields
//! in the order given), so that a Rust module and a Go module that do the
//! same thing record the same history. The host compares a command's input
//! byte for byte with history, so an encoding must never change under a
//! recorded instance.

use std::fmt::Write as _;

/// The deepest nesting [`parse`] accepts: deeper input is refused rather
/// than allowed to exhaust the guest's stack.
pub const MAX_DEPTH: usize = 512;

/// A JSON value. Numbers keep their text, so that no integer loses
/// precision on the way through; objects keep their fields in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// A number, as its JSON text (already checked to be one).
    Number(String),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// An object with the fields given, in that order.
    pub fn object<K: Into<String>>(fields: Vec<(K, Json)>) -> Json {
        Json::Object(fields.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// The value of the field `name` of an object, if it is one and has it.
    pub fn get(&self, name: &str) -> Option<&Json> {
        match self {
            Json::Object(fields) => fields.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The field `name` of an object, decoded as `T`; a field that is
    /// absent decodes as `null` does (so `Option` fields may be left out).
    pub fn field<T: FromJson>(&self, name: &str) -> Result<T, String> {
        if !matches!(self, Json::Object(_)) {
            return Err(format!(
                "expected an object with the field {:?}, found {}",
                name,
                self.kind()
            ));
        }
        T::from_json(self.get(name).unwrap_or(&Json::Null)).map_err(|e| format!("field {:?}: {}", name, e))
    }

    /// What kind of value this is, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }

    /// The compact encoding of the value.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = String::new();
        self.write(&mut out);
        out.into_bytes()
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(n) => out.push_str(n),
            Json::String(s) => write_string(s, out),
            Json::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Json::Object(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(k, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// Writes s as a JSON string, escaped as Go's encoding/json escapes it.
fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Parses JSON text. Empty input is `null` (the ABI's rule). Text that is
/// not JSON, has anything after its value, nests deeper than [`MAX_DEPTH`]
/// or names a field twice in one object (which I-JSON forbids) is refused,
/// saying where.
pub fn parse(bytes: &[u8]) -> Result<Json, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {}", e))?;
    if text.is_empty() {
        return Ok(Json::Null);
    }
    let mut p = Parser {
        s: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.space();
    if p.pos != p.s.len() {
        return Err(p.error("text after the value"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, what: &str) -> String {
        format!("{} at byte {}", what, self.pos)
    }

    fn space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.pos) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.s[self.pos..].starts_with(lit.as_bytes()) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Json, String> {
        self.space();
        match self.s.get(self.pos) {
            None => Err(self.error("unexpected end of JSON")),
            Some(b'n') if self.eat("null") => Ok(Json::Null),
            Some(b't') if self.eat("true") => Ok(Json::Bool(true)),
            Some(b'f') if self.eat("false") => Ok(Json::Bool(false)),
            Some(b'"') => self.string().map(Json::String),
            Some(b'[') => self.nested(|p| {
                let mut items = Vec::new();
                p.space();
                if p.eat("]") {
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(p.value()?);
                    p.space();
                    if p.eat("]") {
                        return Ok(Json::Array(items));
                    }
                    if !p.eat(",") {
                        return Err(p.error("expected , or ] in an array"));
                    }
                }
            }),
            Some(b'{') => self.nested(|p| {
                let mut fields: Vec<(String, Json)> = Vec::new();
                p.space();
                if p.eat("}") {
                    return Ok(Json::Object(fields));
                }
                loop {
                    p.space();
                    if p.s.get(p.pos) != Some(&b'"') {
                        return Err(p.error("expected a field name"));
                    }
                    let k = p.string()?;
                    if fields.iter().any(|(name, _)| *name == k) {
                        return Err(p.error(&format!("the field {:?} a second time in one object", k)));
                    }
                    p.space();
                    if !p.eat(":") {
                        return Err(p.error("expected : after a field name"));
                    }
                    let v = p.value()?;
                    fields.push((k, v));
                    p.space();
                    if p.eat("}") {
                        return Ok(Json::Object(fields));
                    }
                    if !p.eat(",") {
                        return Err(p.error("expected , or } in an object"));
                    }
                }
            }),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("unexpected character")),
        }
    }

    fn nested(&mut self, f: impl FnOnce(&mut Self) -> Result<Json, String>) -> Result<Json, String> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(&format!("nesting deeper than {}", MAX_DEPTH)));
        }
        self.depth += 1;
        self.pos += 1;
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.s.get(self.pos) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.pos;
        self.eat("-");
        let int_start = self.pos;
        let n = self.digits();
        if n == 0 || (n > 1 && self.s[int_start] == b'0') {
            return Err(self.error("malformed number"));
        }
        if self.eat(".") && self.digits() == 0 {
            return Err(self.error("malformed number"));
        }
        if let Some(b'e' | b'E') = self.s.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.s.get(self.pos) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("malformed number"));
            }
        }
        // The bytes are ASCII digits and signs: always a str.
        Ok(Json::Number(
            String::from_utf8_lossy(&self.s[start..self.pos]).into_owned(),
        ))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .s
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.error("short \\u escape"))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.error("bad \\u escape"))?;
        let v = u32::from_str_radix(text, 16).map_err(|_| self.error("bad \\u escape"))?;
        self.pos += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, String> {
        self.pos += 1; // the opening quote
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(&b) = self.s.get(self.pos) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // The input is a str and the run stops at ASCII bytes: a whole
            // run of characters.
            out.push_str(&String::from_utf8_lossy(&self.s[start..self.pos]));
            match self.s.get(self.pos) {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let esc = *self.s.get(self.pos).ok_or_else(|| self.error("unterminated string"))?;
                    self.pos += 1;
                    match esc {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xd800..0xdc00).contains(&hi) {
                                if !self.eat("\\u") {
                                    return Err(self.error("lone surrogate escape"));
                                }
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return Err(self.error("lone surrogate escape"));
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            out.push(char::from_u32(c).ok_or_else(|| self.error("lone surrogate escape"))?);
                        }
                        _ => return Err(self.error("bad escape")),
                    }
                }
                Some(_) => return Err(self.error("control character in a string")),
            }
        }
    }
}

/// The name of `T` without its module paths (`Vec<String>`, not
/// `alloc::vec::Vec<alloc::string::String>`), for error messages.
pub(crate) fn type_name<T>() -> String {
    let mut out = String::new();
    let mut path = String::new();
    for c in std::any::type_name::<T>().chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            path.push(c);
            continue;
        }
        out.push_str(path.rsplit("::").next().unwrap_or_default());
        path.clear();
        out.push(c);
    }
    out.pop();
    out
}

/// A value that encodes to JSON.
pub trait ToJson {
    fn to_json(&self) -> Json;
}

/// A value that decodes from JSON; the error says what was wrong.
pub trait FromJson: Sized {
    fn from_json(j: &Json) -> Result<Self, String>;
}

/// Encodes v to JSON bytes.
pub fn to_vec<T: ToJson + ?Sized>(v: &T) -> Vec<u8> {
    v.to_json().to_bytes()
}

/// Decodes JSON bytes (empty: `null`) as a `T`.
pub fn from_slice<T: FromJson>(bytes: &[u8]) -> Result<T, String> {
    T::from_json(&parse(bytes)?)
}

impl ToJson for Json {
    fn to_json(&self) -> Json {
        self.clone()
    }
}

impl FromJson for Json {
    fn from_json(j: &Json) -> Result<Self, String> {
        Ok(j.clone())
    }
}

/// `()` encodes as `null` and decodes from anything, ignoring it.
impl ToJson for () {
    fn to_json(&self) -> Json {
        Json::Null
    }
}

impl FromJson for () {
    fn from_json(_: &Json) -> Result<Self, String> {
        Ok(())
    }
}

impl ToJson for bool {
    fn to_json(&self) -> Json {
        Json::Bool(*self)
    }
}

impl FromJson for bool {
    fn from_json(j: &Json) -> Result<Self, String> {
        match j {
            Json::Bool(b) => Ok(*b),
            other => Err(format!("expected a boolean, found {}", other.kind())),
        }
    }
}

impl ToJson for str {
    fn to_json(&self) -> Json {
        Json::String(self.to_string())
    }
}

impl ToJson for String {
    fn to_json(&self) -> Json {
        Json::String(self.clone())
    }
}

impl FromJson for String {
    fn from_json(j: &Json) -> Result<Self, String> {
        match j {
            Json::String(s) => Ok(s.clone()),
            other => Err(format!("expected a string, found {}", other.kind())),
        }
    }
}

impl<T: ToJson + ?Sized> ToJson for &T {
    fn to_json(&self) -> Json {
        (**self).to_json()
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl ToJson for $t {
            fn to_json(&self) -> Json {
                Json::Number(self.to_string())
            }
        }

        impl FromJson for $t {
            fn from_json(j: &Json) -> Result<Self, String> {
                match j {
                    Json::Number(n) => n.parse().map_err(|_| format!("the number {} is not a {}", n, stringify!($t))),
                    other => Err(format!("expected a number, found {}", other.kind())),
                }
            }
        }
    )*};
}

integers!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

/// An `f64` encodes as Go's encoding/json writes a float64: the shortest
/// text that reads back the same, with an exponent below 1e-6 and from
/// 1e21. NaN and the infinities have no JSON: they encode as `null`.
impl ToJson for f64 {
    fn to_json(&self) -> Json {
        let v = *self;
        if !v.is_finite() {
            return Json::Null;
        }
        let abs = v.abs();
        if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
            // Rust writes 1e21 and 1e-7; Go 1e+21 and 1e-07.
            let text = format!("{:e}", v);
            let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
            let (sign, digits) = exp.strip_prefix('-').map_or(("+", exp), |d| ("-", d));
            let pad = if digits.len() < 2 { "0" } else { "" };
            return Json::Number(format!("{}e{}{}{}", mantissa, sign, pad, digits));
        }
        Json::Number(format!("{}", v))
    }
}

impl FromJson for f64 {
    fn from_json(j: &Json) -> Result<Self, String> {
        match j {
            Json::Number(n) => n.parse().map_err(|_| format!("the number {} is not an f64", n)),
            other => Err(format!("expected a number, found {}", other.kind())),
        }
    }
}

impl<T: ToJson> ToJson for [T] {
    fn to_json(&self) -> Json {
        Json::Array(self.iter().map(ToJson::to_json).collect())
    }
}

impl<T: ToJson> ToJson for Vec<T> {
    fn to_json(&self) -> Json {
        self.as_slice().to_json()
    }
}

impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(j: &Json) -> Result<Self, String> {
        match j {
            Json::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| T::from_json(v).map_err(|e| format!("element {}: {}", i, e)))
                .collect(),
            other => Err(format!("expected an array, found {}", other.kind())),
        }
    }
}

impl<T: ToJson> ToJson for Option<T> {
    fn to_json(&self) -> Json {
        self.as_ref().map_or(Json::Null, ToJson::to_json)
    }
}

impl<T: FromJson> FromJson for Option<T> {
    fn from_json(j: &Json) -> Result<Self, String> {
        match j {
            Json::Null => Ok(None),
            v => T::from_json(v).map(Some),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_go_writes() {
        let cases: Vec<(Json, &str)> = vec![
            ("world".to_json(), r#""world""#),
            ("a<b>&c".to_json(), r#""a\u003cb\u003e\u0026c""#),
            (
                "q\"\\\n\r\t\u{8}\u{c}\u{1}\u{7f}".to_json(),
                "\"q\\\"\\\\\\n\\r\\t\\b\\f\\u0001\u{7f}\"",
            ),
            ("\u{2028}\u{2029}é日本".to_json(), "\"\\u2028\\u2029é日本\""),
            (11i64.to_json(), "11"),
            ((-9223372036854775808i64).to_json(), "-9223372036854775808"),
            (u64::MAX.to_json(), "18446744073709551615"),
            (1.5f64.to_json(), "1.5"),
            (1e21f64.to_json(), "1e+21"),
            (1e-7f64.to_json(), "1e-07"),
            (1.25e-300f64.to_json(), "1.25e-300"),
            (100f64.to_json(), "100"),
            (f64::NAN.to_json(), "null"),
            (vec!["a", "b"].to_json(), r#"["a","b"]"#),
            (None::<bool>.to_json(), "null"),
            (
                Json::object(vec![("approved", true.to_json()), ("by", "ada".to_json())]),
                r#"{"approved":true,"by":"ada"}"#,
            ),
        ];
        for (v, want) in cases {
            assert_eq!(String::from_utf8(v.to_bytes()).unwrap(), want);
        }
    }

    #[test]
    fn reads_back_what_it_writes() {
        let v = Json::object(vec![
            ("s", "x<\u{2028}\"\\\n\u{1}😀".to_json()),
            ("n", (-12i64).to_json()),
            ("f", 2.5e-9f64.to_json()),
            (
                "a",
                Json::Array(vec![Json::Null, Json::Bool(false), Json::Object(vec![])]),
            ),
        ]);
        assert_eq!(parse(&v.to_bytes()).unwrap(), v);
    }

    /// Parses every prefix of a document holding each kind of value, and
    /// the document with each byte replaced by each of a few others: each
    /// parses or is refused, and none panics.
    #[test]
    fn parses_damaged_text_without_panicking() {
        let doc = br#"{"a":[1,-2.5e3,true,false,null],"b":"x\u00e9\ud83d\ude00
","c":{}}"#;
        for n in 0..doc.len() {
            let _ = parse(&doc[..n]);
        }
        for i in 0..doc.len() {
            for b in [b'"', b'\\', b'[', b'{', b'}', b',', b'0', b'e', 0xc3, 0x00] {
                let mut d = doc.to_vec();
                d[i] = b;
                let _ = parse(&d);
            }
        }
    }

    #[test]
    fn names_types_briefly() {
        assert_eq!(type_name::<Vec<Option<String>>>(), "Vec<Option<String>>");
        assert_eq!(type_name::<(u8, &str)>(), "(u8, &str)");
    }

    #[test]
    fn parses() {
        assert_eq!(parse(b"").unwrap(), Json::Null);
        assert_eq!(
            parse(b" {\"approved\" : true, \"by\": \"ada\"} ")
                .unwrap()
                .field::<String>("by")
                .unwrap(),
            "ada"
        );
        assert_eq!(
            parse(br#""\ud83d\ude00\u00e9\/""#).unwrap(),
            Json::String("😀é/".into())
        );
        assert_eq!(from_slice::<Vec<String>>(br#"["a b", "c"]"#).unwrap(), vec!["a b", "c"]);
        assert_eq!(from_slice::<Option<u8>>(b"null").unwrap(), None);
        assert_eq!(parse(b"[1,{\"a\":[]}]").unwrap().to_bytes(), b"[1,{\"a\":[]}]");
    }

    #[test]
    fn refuses() {
        let deep = "[".repeat(MAX_DEPTH + 1);
        for (input, want) in [
            (&b"{"[..], "expected a field name at byte 1"),
            (b"[1,", "unexpected end of JSON at byte 3"),
            (b"01", "malformed number at byte 2"),
            (b"1.", "malformed number at byte 2"),
            (b"-", "malformed number at byte 1"),
            (b"1e", "malformed number at byte 2"),
            (b"nul", "unexpected character at byte 0"),
            (b"\"abc", "unterminated string at byte 4"),
            (b"\"\\", "unterminated string at byte 2"),
            (b"\"\\u12\"", "short \\u escape at byte 3"),
            (b"\"\\u12zz\"", "bad \\u escape at byte 3"),
            (b"\"\\ud800\"", "lone surrogate escape at byte 7"),
            (b"\"\\ud800\\u0041\"", "lone surrogate escape at byte 13"),
            (b"\"\\udc00\"", "lone surrogate escape at byte 7"),
            (b"\"\x01\"", "control character in a string at byte 1"),
            (
                b"{\"a\":1,\"a\":2}",
                "the field \"a\" a second time in one object at byte 10",
            ),
            (b"true false", "text after the value at byte 5"),
            (b"\xff", "not UTF-8: invalid utf-8 sequence of 1 bytes from index 0"),
            (deep.as_bytes(), "nesting deeper than 512 at byte 512"),
        ] {
            assert_eq!(
                parse(input).unwrap_err(),
                want,
                "input {:?}",
                String::from_utf8_lossy(input)
            );
        }
        assert_eq!(from_slice::<u8>(b"300").unwrap_err(), "the number 300 is not a u8");
        assert_eq!(
            from_slice::<String>(b"1").unwrap_err(),
            "expected a string, found a number"
        );
        assert_eq!(
            parse(b"{}").unwrap().field::<String>("by").unwrap_err(),
            "field \"by\": expected a string, found null"
        );
        assert_eq!(
            parse(b"[]").unwrap().field::<String>("by").unwrap_err(),
            "expected an object with the field \"by\", found an array"
        );
    }
}
