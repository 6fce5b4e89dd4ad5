//! Strict JSON parsing for everything an agent sends.
//!
//! `serde_json::Value` silently keeps the last of duplicate keys, so
//! `{"cmd":"ls","cmd":"rm -rf /"}` would show a reviewer one thing and run another.
//! This parser refuses duplicates, bounds nesting depth and total size, and
//! otherwise produces an ordinary `serde_json::Value`.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// Limits applied while parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonLimits {
    /// Maximum size of the input in bytes.
    pub max_bytes: usize,
    /// Maximum nesting depth of arrays and objects (the top-level value is depth 1).
    pub max_depth: usize,
}

impl Default for JsonLimits {
    fn default() -> Self {
        Self {
            max_bytes: 1024 * 1024,
            max_depth: 32,
        }
    }
}

/// Why a document was refused. `code()` is the stable machine-readable name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    #[error("body is {size} bytes; the limit is {limit}")]
    TooLarge { size: usize, limit: usize },
    #[error("nesting deeper than {limit} levels")]
    TooDeep { limit: usize },
    #[error("duplicate key \"{key}\"")]
    DuplicateKey { key: String },
    #[error("malformed JSON: {message}")]
    Malformed { message: String },
}

impl JsonError {
    pub fn code(&self) -> &'static str {
        match self {
            JsonError::TooLarge { .. } => "payload_too_large",
            JsonError::TooDeep { .. } => "json_too_deep",
            JsonError::DuplicateKey { .. } => "duplicate_key",
            JsonError::Malformed { .. } => "malformed_json",
        }
    }
}

const DUPLICATE_MARK: &str = "\u{0}airlock-duplicate-key:";
const DEPTH_MARK: &str = "\u{0}airlock-too-deep";

/// Parse `input` as JSON, refusing duplicate keys, excessive depth and size.
pub fn parse_strict(input: &[u8], limits: JsonLimits) -> Result<Value, JsonError> {
    if input.len() > limits.max_bytes {
        return Err(JsonError::TooLarge {
            size: input.len(),
            limit: limits.max_bytes,
        });
    }
    let mut de = serde_json::Deserializer::from_slice(input);
    // Our own depth limit is the one that matters; serde_json's fixed 128 would
    // otherwise fire first for deep limits and give a vaguer message.
    let value = StrictValue {
        depth: 1,
        max_depth: limits.max_depth,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v))
    .map_err(|e| classify(e, limits))?;
    Ok(value)
}

/// Convenience wrapper for text input.
pub fn parse_strict_str(input: &str, limits: JsonLimits) -> Result<Value, JsonError> {
    parse_strict(input.as_bytes(), limits)
}

fn classify(e: serde_json::Error, limits: JsonLimits) -> JsonError {
    let msg = e.to_string();
    if let Some(rest) = msg.strip_prefix(DUPLICATE_MARK) {
        // serde_json appends " at line L column C"; keep only the key.
        let key = rest.rsplit_once(" at line ").map_or(rest, |(k, _)| k);
        return JsonError::DuplicateKey { key: key.to_string() };
    }
    if msg.starts_with(DEPTH_MARK) || msg.starts_with("recursion limit exceeded") {
        return JsonError::TooDeep {
            limit: limits.max_depth,
        };
    }
    JsonError::Malformed { message: msg }
}

struct StrictValue {
    depth: usize,
    max_depth: usize,
}

impl StrictValue {
    fn child(&self) -> Self {
        StrictValue {
            depth: self.depth + 1,
            max_depth: self.max_depth,
        }
    }
}

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if self.depth > self.max_depth {
            return Err(A::Error::custom(DEPTH_MARK));
        }
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(self.child())? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if self.depth > self.max_depth {
            return Err(A::Error::custom(DEPTH_MARK));
        }
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(A::Error::custom(format!("{DUPLICATE_MARK}{key}")));
            }
            let v = map.next_value_seed(self.child())?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// Depth of a value (scalars are 1), for values that did not come through the parser.
pub fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Value, JsonError> {
        parse_strict_str(s, JsonLimits::default())
    }

    #[test]
    fn ordinary_documents_parse_to_the_same_value_as_serde_json() {
        let s = r#"{"a":[1,2.5,-3,true,null,"x"],"b":{"c":{}},"u":18446744073709551615}"#;
        assert_eq!(parse(s).unwrap(), serde_json::from_str::<Value>(s).unwrap());
    }

    #[test]
    fn duplicate_keys_are_refused_and_named() {
        let e = parse(r#"{"cmd":"ls","cmd":"rm -rf /"}"#).unwrap_err();
        assert_eq!(e, JsonError::DuplicateKey { key: "cmd".to_string() });
        assert_eq!(e.code(), "duplicate_key");
    }

    #[test]
    fn duplicate_keys_in_nested_objects_are_refused() {
        let e = parse(r#"{"a":[{"x":1,"y":2,"x":3}]}"#).unwrap_err();
        assert_eq!(e.code(), "duplicate_key");
    }

    #[test]
    fn same_key_in_sibling_objects_is_fine() {
        assert!(parse(r#"[{"x":1},{"x":2}]"#).is_ok());
    }

    #[test]
    fn depth_limit_is_enforced_exactly() {
        let limits = JsonLimits {
            max_bytes: 1 << 20,
            max_depth: 3,
        };
        assert!(parse_strict_str("[[[1]]]", limits).is_ok());
        let e = parse_strict_str("[[[[1]]]]", limits).unwrap_err();
        assert_eq!(e, JsonError::TooDeep { limit: 3 });
    }

    #[test]
    fn very_deep_input_is_refused_without_stack_overflow() {
        let s = "[".repeat(100_000) + &"]".repeat(100_000);
        assert_eq!(parse(&s).unwrap_err().code(), "json_too_deep");
    }

    #[test]
    fn size_limit_is_checked_before_parsing() {
        let limits = JsonLimits {
            max_bytes: 10,
            max_depth: 8,
        };
        let e = parse_strict_str(r#"{"a":"0123456789"}"#, limits).unwrap_err();
        assert_eq!(e.code(), "payload_too_large");
    }

    #[test]
    fn malformed_and_trailing_input_are_refused() {
        for s in ["", "{", r#"{"a":}"#, "[1,]", "{} {}", "nul", r#"{'a':1}"#] {
            assert_eq!(parse(s).unwrap_err().code(), "malformed_json", "{s:?}");
        }
    }

    #[test]
    fn depth_of_values() {
        assert_eq!(depth(&serde_json::json!(1)), 1);
        assert_eq!(depth(&serde_json::json!({"a":[1]})), 3);
    }
}
