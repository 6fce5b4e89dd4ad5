//! Reviewers edit the redacted arguments; what the agent executes must carry the real
//! values. Every part of the edit that is unchanged from the redacted original takes the
//! original's raw value back; a redaction marker anywhere else is refused, so a secret
//! can neither be lost (released as the marker text) nor moved to another field.

use serde_json::Value;

/// Rebuild raw arguments from a reviewer's edit of `redacted` (the redacted form of `raw`).
///
/// A secret the reviewer cannot see must not be sent somewhere new: when the edit keeps
/// a redacted value, no other text may change (a new address, URL, path or message
/// around an unseen secret is exactly how it would be exfiltrated). Such an edit needs
/// the secret removed, or retyped in full by someone allowed to know it.
pub fn unredact(edited: &Value, redacted: &Value, raw: &Value) -> Result<Value, String> {
    let mut w = Walk::default();
    let out = w.walk(edited, Some(redacted), Some(raw), &mut String::new())?;
    if let (Some(secret), Some(changed)) = (w.carried.first(), w.changed.first()) {
        return Err(format!(
            "{changed}: text changed while the redacted value at {secret} is kept; a modification may not send a secret you cannot see to a new place. Remove the secret, or have it typed in full by someone allowed to know it"
        ));
    }
    Ok(out)
}

#[derive(Default)]
struct Walk {
    /// Where redacted values were kept as they were.
    carried: Vec<String>,
    /// Where text was changed or added.
    changed: Vec<String>,
}

/// Could this changed text send something somewhere else: an address, URL, host or
/// path, or any text under a key that names a destination?
fn looks_like_destination(path: &str, s: &str) -> bool {
    const KEYS: &[&str] = &[
        "to",
        "cc",
        "bcc",
        "recipient",
        "recipients",
        "email",
        "address",
        "url",
        "uri",
        "href",
        "host",
        "hostname",
        "endpoint",
        "webhook",
        "server",
        "path",
        "paths",
        "dest",
        "destination",
        "target",
        "channel",
        "command",
        "cmd",
        "phone",
        "number",
        "account",
        "iban",
    ];
    let key = path
        .rsplit('/')
        .find(|p| p.parse::<usize>().is_err())
        .unwrap_or("")
        .to_ascii_lowercase()
        .replace(['-', '_'], "");
    if KEYS.iter().any(|k| key == *k || key.ends_with(k)) {
        return true;
    }
    let t = s.trim();
    t.contains('@')
        || t.contains("://")
        || t.starts_with(['/', '\\', '~'])
        || t.split(['/', ':', '?']).next().is_some_and(|h| {
            let labels: Vec<&str> = h.split('.').collect();
            labels.len() >= 2
                && labels
                    .iter()
                    .all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
                && labels
                    .last()
                    .is_some_and(|tld| tld.chars().all(|c| c.is_ascii_alphabetic()))
        })
}

fn has_marker(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains("[redacted: "),
        Value::Array(a) => a.iter().any(has_marker),
        Value::Object(m) => m.values().any(has_marker),
        _ => false,
    }
}

impl Walk {
    fn walk(
        &mut self,
        edited: &Value,
        redacted: Option<&Value>,
        raw: Option<&Value>,
        path: &mut String,
    ) -> Result<Value, String> {
        let at = |p: &str| if p.is_empty() { "/".to_string() } else { p.to_string() };
        if let (Some(r), Some(raw)) = (redacted, raw) {
            if r == edited {
                if has_marker(r) {
                    self.carried.push(at(path));
                }
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
                    let child = self.walk(v, redacted.and_then(|r| r.get(k)), raw.and_then(|r| r.get(k)), path)?;
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
                    out.push(self.walk(v, redacted.and_then(|r| r.get(i)), raw.and_then(|r| r.get(i)), path)?);
                    path.truncate(len);
                }
                Ok(Value::Array(out))
            }
            Value::String(s) if s.contains("[redacted: ") => Err(format!(
                "{}: a redacted value was changed or moved; keep it where it was, or type the new value in full",
                at(path)
            )),
            Value::String(s) => {
                if looks_like_destination(path, s) {
                    self.changed.push(at(path));
                }
                Ok(edited.clone())
            }
            other => Ok(other.clone()),
        }
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
    fn a_kept_secret_cannot_go_to_a_changed_destination() {
        let raw = json!({"to": "ops@example.com", "body": "key: sk-live-0123456789abcdefghij", "copies": 1});
        let r = redacted(&raw);
        assert!(has_marker(&r["body"]), "the fixture must redact the body: {r}");
        let mut edit = r.clone();
        edit["to"] = json!("attacker@example.net");
        let e = unredact(&edit, &r, &raw).unwrap_err();
        assert!(e.starts_with("/to") && e.contains("/body"), "{e}");
        // Adding a destination next to the kept secret is refused too, under any key.
        for (k, v) in [
            ("cc", "x@example.net"),
            ("note", "https://evil.example/c"),
            ("x", "evil.example.net"),
        ] {
            let mut edit = r.clone();
            edit[k] = json!(v);
            assert!(unredact(&edit, &r, &raw).is_err(), "{k}: {v}");
        }
        // Numbers and plain text may change; removing the secret frees the rest.
        let mut edit = r.clone();
        edit["copies"] = json!(2);
        edit["subject"] = json!("Quarterly numbers");
        assert_eq!(unredact(&edit, &r, &raw).unwrap()["body"], raw["body"]);
        let edit = json!({"to": "attacker@example.net", "body": "no key here", "copies": 1});
        assert_eq!(unredact(&edit, &r, &raw).unwrap(), edit);
    }

    #[test]
    fn arrays_and_added_fields_are_walked() {
        let raw = json!({"paths": ["/a", "/b"]});
        let r = redacted(&raw);
        let out = unredact(&json!({"paths": ["/a"], "extra": 1}), &r, &raw).unwrap();
        assert_eq!(out, json!({"paths": ["/a"], "extra": 1}));
    }
}
