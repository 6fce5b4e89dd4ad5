//! Reviewers edit the redacted arguments; what the agent executes must carry the real
//! values. Every part of the edit that is unchanged from the redacted original takes the
//! original's raw value back; a redaction marker anywhere else is refused, so a secret
//! can neither be lost (released as the marker text) nor moved to another field.

use serde_json::Value;

/// Rebuild raw arguments from a reviewer's edit of `redacted` (the redacted form of `raw`).
pub fn unredact(edited: &Value, redacted: &Value, raw: &Value) -> Result<Value, String> {
    walk(edited, Some(redacted), Some(raw), &mut String::new())
}

fn walk(edited: &Value, redacted: Option<&Value>, raw: Option<&Value>, path: &mut String) -> Result<Value, String> {
    if let (Some(r), Some(raw)) = (redacted, raw) {
        if r == edited {
            return Ok(raw.clone());
        }
    }
    match edited {
        Value::Object(m) => {
            let mut out = serde_json::Map::with_capacity(m.len());
            for (k, v) in m {
                let len = path.len();
                path.push('/');
                path.push_str(k);
                let child = walk(v, redacted.and_then(|r| r.get(k)), raw.and_then(|r| r.get(k)), path)?;
                path.truncate(len);
                out.insert(k.clone(), child);
            }
            Ok(Value::Object(out))
        }
        Value::Array(a) => {
            let mut out = Vec::with_capacity(a.len());
            for (i, v) in a.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                out.push(walk(
                    v,
                    redacted.and_then(|r| r.get(i)),
                    raw.and_then(|r| r.get(i)),
                    path,
                )?);
                path.truncate(len);
            }
            Ok(Value::Array(out))
        }
        Value::String(s) if s.contains("[redacted: ") => Err(format!(
            "{}: a redacted value was changed or moved; keep it where it was, or type the new value in full",
            if path.is_empty() { "/" } else { path }
        )),
        other => Ok(other.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn redacted(raw: &Value) -> Value {
        policy::redact::redact_value(raw).value
    }

    #[test]
    fn unchanged_secrets_get_their_raw_values_back() {
        let raw = json!({"to": "a@example.com", "api_key": "sk-live-0123456789abcdef", "body": "hi"});
        let r = redacted(&raw);
        assert_ne!(r, raw, "the fixture must contain a secret");
        let mut edit = r.clone();
        edit["body"] = json!("hello");
        let out = unredact(&edit, &r, &raw).unwrap();
        assert_eq!(out["api_key"], raw["api_key"]);
        assert_eq!(out["body"], "hello");
    }

    #[test]
    fn a_moved_or_altered_marker_is_refused() {
        let raw = json!({"api_key": "sk-live-0123456789abcdef", "note": ""});
        let r = redacted(&raw);
        let mut moved = r.clone();
        moved["note"] = r["api_key"].clone();
        assert!(unredact(&moved, &r, &raw).unwrap_err().starts_with("/note"));
        let mut altered = r.clone();
        altered["api_key"] = json!(format!("{} x", r["api_key"].as_str().unwrap()));
        assert!(unredact(&altered, &r, &raw).is_err());
    }

    #[test]
    fn a_new_value_replaces_a_secret() {
        let raw = json!({"api_key": "sk-live-0123456789abcdef"});
        let r = redacted(&raw);
        let out = unredact(&json!({"api_key": "replaced"}), &r, &raw).unwrap();
        assert_eq!(out, json!({"api_key": "replaced"}));
    }

    #[test]
    fn arrays_and_added_fields_are_walked() {
        let raw = json!({"paths": ["/a", "/b"]});
        let r = redacted(&raw);
        let out = unredact(&json!({"paths": ["/a"], "extra": 1}), &r, &raw).unwrap();
        assert_eq!(out, json!({"paths": ["/a"], "extra": 1}));
    }
}
