//! Redaction: the one function used for everything that is stored or shown.
//!
//! Two kinds of rules:
//! - **key names** (case- and separator-insensitive: `apiKey`, `x-api-key`, `API_KEY`
//!   are one name): the whole value is replaced. Exact names mask any value; names
//!   that merely *contain* a secret word (`db_password`, `githubToken`) mask strings,
//!   so `max_tokens: 100` stays readable.
//! - **values**: bearer/basic credentials, JWTs, AWS/GitHub/GitLab/Slack/OpenAI/
//!   Stripe/Google keys, private key blocks, passwords in URLs, card numbers (IIN
//!   prefix + Luhn), and long high-entropy strings. Only the matching part of a string
//!   is replaced.
//!
//! A masked value reads `[redacted: <kind>]`; the report lists the JSON Pointer and
//! kind of everything masked (never the value). With a fingerprint function (the server
//! passes a keyed HMAC), the report also holds each masked value's fingerprint, so a
//! value can later be recognised ("was this token ever sent?") without being stored.

use regex::{Regex, RegexSet};
use serde::Serialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::LazyLock;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Masked {
    /// JSON Pointer of the value (empty for plain text).
    pub path: String,
    pub kind: &'static str,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Redacted<T> {
    pub value: T,
    pub masked: Vec<Masked>,
    /// Fingerprints of the masked values (empty without a fingerprint function), each once.
    pub fingerprints: Vec<String>,
}

/// Turns a masked value into its fingerprint (a keyed hash; never the value itself).
pub type Fingerprint<'f> = &'f dyn Fn(&str) -> String;

/// What a redaction collects besides the redacted value.
struct Out<'f> {
    masked: Vec<Masked>,
    fingerprint: Option<Fingerprint<'f>>,
    fingerprints: Vec<String>,
}

impl Out<'_> {
    fn secret(&mut self, value: &str) {
        if let Some(f) = self.fingerprint {
            let p = f(value);
            if !self.fingerprints.contains(&p) {
                self.fingerprints.push(p);
            }
        }
    }

    fn finish<T>(self, value: T) -> Redacted<T> {
        Redacted {
            value,
            masked: self.masked,
            fingerprints: self.fingerprints,
        }
    }
}

pub fn marker(kind: &str) -> String {
    format!("[redacted: {kind}]")
}

/// Keys whose value is always secret, whatever its type (normalised: lower-case,
/// letters and digits only).
const EXACT_KEYS: &[(&str, &str)] = &[
    ("token", "token"),
    ("accesstoken", "token"),
    ("refreshtoken", "token"),
    ("idtoken", "token"),
    ("authtoken", "token"),
    ("sessiontoken", "token"),
    ("csrftoken", "token"),
    ("xcsrftoken", "token"),
    ("password", "password"),
    ("passwd", "password"),
    ("pwd", "password"),
    ("passphrase", "password"),
    ("secret", "secret"),
    ("clientsecret", "secret"),
    ("secretkey", "secret"),
    ("webhooksecret", "secret"),
    ("signingsecret", "secret"),
    ("apikey", "api_key"),
    ("xapikey", "api_key"),
    ("apitoken", "api_key"),
    ("accesskey", "api_key"),
    ("secretaccesskey", "api_key"),
    ("privatekey", "private_key"),
    ("authorization", "authorization"),
    ("proxyauthorization", "authorization"),
    ("auth", "authorization"),
    ("cookie", "cookie"),
    ("setcookie", "cookie"),
    ("sessionid", "session_id"),
    ("phone", "phone"),
    ("phonenumber", "phone"),
    ("mobile", "phone"),
    ("mobilenumber", "phone"),
    ("telephone", "phone"),
    ("idcard", "id_card"),
    ("idcardnumber", "id_card"),
    ("idnumber", "id_card"),
    ("nationalid", "id_card"),
    ("ssn", "id_card"),
    ("socialsecuritynumber", "id_card"),
    ("passport", "id_card"),
    ("passportnumber", "id_card"),
    ("creditcard", "card_number"),
    ("cardnumber", "card_number"),
    ("ccnumber", "card_number"),
    ("cvv", "card_number"),
    ("cvc", "card_number"),
    ("pin", "pin"),
    ("otp", "pin"),
    ("totp", "pin"),
    ("mfacode", "pin"),
    ("iban", "bank_account"),
    ("accountnumber", "bank_account"),
    ("connectionstring", "secret"),
    ("databaseurl", "secret"),
    ("dsn", "secret"),
];

/// Words that make any key holding a string secret (`db_password`, `githubToken`).
const CONTAINS_KEYS: &[(&str, &str)] = &[
    ("password", "password"),
    ("passwd", "password"),
    ("secret", "secret"),
    ("token", "token"),
    ("apikey", "api_key"),
    ("privatekey", "private_key"),
    ("credential", "secret"),
    ("authorization", "authorization"),
    ("cookie", "cookie"),
];

fn normalize_key(k: &str) -> Cow<'_, str> {
    if k.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
        Cow::Borrowed(k)
    } else {
        Cow::Owned(
            k.chars()
                .filter(char::is_ascii_alphanumeric)
                .map(|c| c.to_ascii_lowercase())
                .collect(),
        )
    }
}

/// `Some(kind)` when a key's value is secret whatever it holds.
pub fn exact_key_kind(key: &str) -> Option<&'static str> {
    let k = normalize_key(key);
    EXACT_KEYS.iter().find(|(n, _)| *n == k).map(|(_, kind)| *kind)
}

/// `Some(kind)` when string values under this key are secret.
pub fn key_kind(key: &str) -> Option<&'static str> {
    let k = normalize_key(key);
    if let Some((_, kind)) = EXACT_KEYS.iter().find(|(n, _)| *n == k) {
        return Some(kind);
    }
    CONTAINS_KEYS.iter().find(|(n, _)| k.contains(n)).map(|(_, kind)| *kind)
}

struct ValueRule {
    kind: &'static str,
    re: Regex,
    check: fn(&str) -> bool,
    /// Capture group to replace (0 = whole match).
    group: usize,
}

fn always(_: &str) -> bool {
    true
}

const PATTERNS: &[(&str, &str, usize)] = &[
    (
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
        0,
    ),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
        0,
    ),
    ("bearer_token", r"(?i)\bbearer\s+[A-Za-z0-9\-._~+/]{8,}=*", 0),
    ("basic_auth", r"(?i)\bbasic\s+[A-Za-z0-9+/]{12,}={0,2}", 0),
    (
        "aws_access_key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}\b",
        0,
    ),
    (
        "aws_secret_key",
        r"(?i)aws_?secret_?access_?key\s*[=:]\s*[A-Za-z0-9/+=]{40}",
        0,
    ),
    (
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
        0,
    ),
    ("gitlab_token", r"\bgl(?:pat|dt|ptt|rt|cbt|soat)-[A-Za-z0-9_-]{20,}", 0),
    (
        "slack_token",
        r"\bxox[abposr]-[A-Za-z0-9-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+",
        0,
    ),
    ("openai_key", r"\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{20,}", 0),
    ("stripe_key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b", 0),
    ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}\b", 0),
    ("url_credentials", r"(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]+:([^/\s@]+)@", 1),
    ("card_number", r"\b(?:\d[ -]?){12,18}\d\b", 0),
    ("high_entropy", r"[A-Za-z0-9+/_=-]{32,}", 0),
];

static RULES: LazyLock<(RegexSet, Vec<ValueRule>)> = LazyLock::new(|| {
    let set = RegexSet::new(PATTERNS.iter().map(|(_, p, _)| *p)).expect("static patterns");
    let rules = PATTERNS
        .iter()
        .map(|(kind, p, group)| ValueRule {
            kind,
            re: Regex::new(p).expect("static pattern"),
            check: match *kind {
                "card_number" => is_card_number,
                "high_entropy" => is_high_entropy,
                _ => always,
            },
            group: *group,
        })
        .collect();
    (set, rules)
});

/// Luhn check plus a known card-network prefix, so timestamps and order numbers pass.
fn is_card_number(s: &str) -> bool {
    let digits: Vec<u32> = s.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let prefix: String = digits.iter().take(4).map(|d| char::from(b'0' + *d as u8)).collect();
    let p2: u32 = prefix[..2].parse().unwrap_or(0);
    let p4: u32 = prefix.parse().unwrap_or(0);
    let known = prefix.starts_with('4')
        || (51..=55).contains(&p2)
        || (2221..=2720).contains(&p4)
        || p2 == 34
        || p2 == 37
        || prefix.starts_with("6011")
        || p2 == 65
        || p2 == 35
        || p2 == 36
        || p2 == 38
        || p2 == 30
        || p2 == 62;
    if !known {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| {
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 {
                    x - 9
                } else {
                    x
                }
            } else {
                *d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Shannon entropy per character.
pub fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    let mut n = 0u32;
    for b in s.bytes() {
        counts[b as usize] += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    let n = n as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = *c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// Long strings that look random: mixed case and digits, high entropy. Hex digests,
/// UUIDs and lower-case paths do not qualify.
fn is_high_entropy(s: &str) -> bool {
    let upper = s.bytes().any(|b| b.is_ascii_uppercase());
    let lower = s.bytes().any(|b| b.is_ascii_lowercase());
    let digit = s.bytes().any(|b| b.is_ascii_digit());
    upper && lower && digit && entropy(s) >= 4.2
}

/// Redact secrets inside free text. Returns the input unchanged (borrowed) when clean.
fn redact_str<'a>(s: &'a str, path: &str, out: &mut Out<'_>) -> Cow<'a, str> {
    let (set, rules) = &*RULES;
    let hits = set.matches(s);
    if !hits.matched_any() {
        return Cow::Borrowed(s);
    }
    let mut cur: Cow<'a, str> = Cow::Borrowed(s);
    for i in hits.iter() {
        let rule = &rules[i];
        let mut hit = false;
        let mut found: Vec<String> = Vec::new();
        let keep = out.fingerprint.is_some();
        let replaced = rule.re.replace_all(&cur, |c: &regex::Captures| {
            let whole = c.get(0).map_or("", |m| m.as_str());
            let Some(target) = c.get(rule.group) else {
                return whole.to_string();
            };
            if !(rule.check)(target.as_str()) || target.as_str().starts_with("[redacted") {
                return whole.to_string();
            }
            hit = true;
            if keep {
                found.push(target.as_str().to_string());
            }
            let start = target.start() - c.get(0).map_or(0, |m| m.start());
            let end = start + target.len();
            format!("{}{}{}", &whole[..start], marker(rule.kind), &whole[end..])
        });
        if hit {
            out.masked.push(Masked {
                path: path.to_string(),
                kind: rule.kind,
            });
            for f in &found {
                out.secret(f);
                // "Bearer <token>": the token alone is what leaks elsewhere.
                if let Some((_, credential)) = f.rsplit_once(char::is_whitespace) {
                    out.secret(credential);
                }
            }
            cur = Cow::Owned(replaced.into_owned());
        }
    }
    cur
}

fn out(fingerprint: Option<Fingerprint<'_>>) -> Out<'_> {
    Out {
        masked: Vec::new(),
        fingerprint,
        fingerprints: Vec::new(),
    }
}

/// Redact free text (plan, reason, result summaries, log lines).
pub fn redact_text(s: &str) -> Redacted<String> {
    redact_text_keyed(s, None)
}

/// [`redact_text`], with the fingerprints of what was masked.
pub fn redact_text_keyed(s: &str, fingerprint: Option<Fingerprint<'_>>) -> Redacted<String> {
    let mut o = out(fingerprint);
    let value = redact_str(s, "", &mut o).into_owned();
    o.finish(value)
}

/// Redact a JSON value (arguments, context).
pub fn redact_value(v: &Value) -> Redacted<Value> {
    redact_value_keyed(v, None)
}

/// [`redact_value`], with the fingerprints of what was masked (a whole value masked for
/// its key is fingerprinted as its text, or its JSON when it is not a string).
pub fn redact_value_keyed(v: &Value, fingerprint: Option<Fingerprint<'_>>) -> Redacted<Value> {
    let mut o = out(fingerprint);
    let value = walk(v, &mut String::new(), None, &mut o);
    o.finish(value)
}

fn escape_pointer(k: &str) -> Cow<'_, str> {
    if k.contains(['~', '/']) {
        Cow::Owned(k.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(k)
    }
}

/// `secret_strings`: a contains-rule kind inherited from an enclosing key.
fn walk(v: &Value, path: &mut String, secret_strings: Option<&'static str>, out: &mut Out<'_>) -> Value {
    match v {
        Value::String(s) => {
            if let Some(kind) = secret_strings {
                out.masked.push(Masked {
                    path: path.clone(),
                    kind,
                });
                out.secret(s);
                return Value::String(marker(kind));
            }
            Value::String(redact_str(s, path, out).into_owned())
        }
        Value::Object(m) => {
            let mut map = Map::with_capacity(m.len());
            for (k, child) in m {
                let len = path.len();
                path.push('/');
                path.push_str(&escape_pointer(k));
                let value = if let Some(kind) = exact_key_kind(k) {
                    out.masked.push(Masked {
                        path: path.clone(),
                        kind,
                    });
                    match child {
                        Value::String(s) => out.secret(s),
                        other => out.secret(&other.to_string()),
                    }
                    Value::String(marker(kind))
                } else {
                    walk(child, path, key_kind(k).or(secret_strings), out)
                };
                path.truncate(len);
                map.insert(k.clone(), value);
            }
            Value::Object(map)
        }
        Value::Array(a) => Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, x)| {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&i.to_string());
                    let r = walk(x, path, secret_strings, out);
                    path.truncate(len);
                    r
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masked_values_are_fingerprinted_once_each_and_only_when_asked() {
        let token = format!("ghp_{}", "a1B2".repeat(9));
        let v = json!({"password": "hunter2", "db": {"password": 1234},
                       "note": format!("use {token} or {token}"), "path": "notes.md"});
        let fp = |s: &str| format!("fp:{s}");
        let r = redact_value_keyed(&v, Some(&fp));
        assert_eq!(r.fingerprints, ["fp:1234", &format!("fp:{token}"), "fp:hunter2"]);
        assert_eq!(r.value, redact_value(&v).value, "fingerprints change nothing else");
        assert!(redact_value(&v).fingerprints.is_empty());
        let t = redact_text_keyed(&format!("Authorization: Bearer {token}"), Some(&fp));
        assert_eq!(
            t.fingerprints,
            [format!("fp:Bearer {token}"), format!("fp:{token}")],
            "{t:?}"
        );
        assert!(!t.value.contains(&token));
    }

    fn kinds(r: &Redacted<Value>) -> Vec<(&str, &str)> {
        r.masked.iter().map(|m| (m.path.as_str(), m.kind)).collect()
    }

    #[test]
    fn secret_key_names_are_masked_whatever_the_spelling() {
        let v = json!({
            "password": "hunter2",
            "API_KEY": "abc",
            "apiKey": "abc",
            "x-api-key": "abc",
            "Authorization": "whatever",
            "Set-Cookie": "a=b",
            "phone_number": "+1 555 0100",
            "ID-Card": "X123",
            "pin": 1234,
            "db_password": "pw",
            "githubToken": "t",
            "nested": {"client_secret": {"deep": "s"}},
        });
        let r = redact_value(&v);
        assert_eq!(r.value["password"], "[redacted: password]");
        assert_eq!(r.value["API_KEY"], "[redacted: api_key]");
        assert_eq!(r.value["apiKey"], "[redacted: api_key]");
        assert_eq!(r.value["x-api-key"], "[redacted: api_key]");
        assert_eq!(r.value["Authorization"], "[redacted: authorization]");
        assert_eq!(r.value["Set-Cookie"], "[redacted: cookie]");
        assert_eq!(r.value["phone_number"], "[redacted: phone]");
        assert_eq!(r.value["ID-Card"], "[redacted: id_card]");
        assert_eq!(r.value["pin"], "[redacted: pin]");
        assert_eq!(r.value["db_password"], "[redacted: password]");
        assert_eq!(r.value["githubToken"], "[redacted: token]");
        assert_eq!(r.value["nested"]["client_secret"], "[redacted: secret]");
        assert!(kinds(&r).contains(&("/nested/client_secret", "secret")));
        assert_eq!(r.masked.len(), 12);
    }

    #[test]
    fn benign_keys_and_values_are_left_alone() {
        let v = json!({
            "max_tokens": 1024,
            "path": "/data/shared/uploads/2024/05/export.csv",
            "order_id": "A1B2C3D4E5",
            "amount": 4999.5,
            "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "uuid": "123e4567-e89b-12d3-a456-426614174000",
            "timestamp_ms": "1764547199999",
            "text": "Please refund order 4111 1111 1111 1112 (not a valid card).",
            "url": "https://example.com/api/v1/orders?page=2",
            "command": "ls -la /tmp && git status",
            "identifier": "getUserAccountDetailsByIdentifier",
        });
        let r = redact_value(&v);
        assert_eq!(r.value, v, "masked: {:?}", r.masked);
        assert!(r.masked.is_empty());
    }

    #[test]
    fn secret_values_are_found_inside_text() {
        let cases = [
            ("curl -H 'Authorization: Bearer abcdef0123456789abcdef' x", "bearer_token"),
            ("token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U here", "jwt"),
            ("aws key AKIAIOSFODNN7EXAMPLE in config", "aws_access_key"),
            ("ghp_0123456789abcdefghijABCDEFGHIJ012345", "github_token"),
            ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_token"),
            ("glpat-abcdefghij0123456789", "gitlab_token"),
            ("xoxb-123456789012-abcdefghijkl", "slack_token"),
            ("https://hooks.slack.com/services/T000/B000/XXXX", "slack_token"),
            ("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx0123", "openai_key"),
            ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "openai_key"),
            ("sk_live_abcdefghijklmnop1234", "stripe_key"),
            ("AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "google_api_key"),
            ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "private_key"),
            ("-----BEGIN OPENSSH PRIVATE KEY-----\ntruncated", "private_key"),
            ("postgres://admin:s3cretPW@db.example.com/app", "url_credentials"),
            ("card 4111 1111 1111 1111 exp 12/29", "card_number"),
            ("card 5500-0000-0000-0004", "card_number"),
            ("amex 378282246310005", "card_number"),
            ("key=Zx9Qw2Er7Ty4Ui1Op0As5Df8Gh3Jk6Lz", "high_entropy"),
            ("Authorization: Basic dXNlcm5hbWU6cGFzc3dvcmQ=", "basic_auth"),
        ];
        for (text, kind) in cases {
            let r = redact_text(text);
            assert!(
                r.masked.iter().any(|m| m.kind == kind),
                "{text:?}: {:?} -> {}",
                r.masked,
                r.value
            );
            assert!(r.value.contains(&format!("[redacted: {kind}]")), "{}", r.value);
        }
    }

    #[test]
    fn only_the_secret_part_of_a_string_is_replaced() {
        let r = redact_text("connect to postgres://admin:s3cret@db/app now");
        assert_eq!(
            r.value,
            "connect to postgres://admin:[redacted: url_credentials]@db/app now"
        );
        let r = redact_text("use AKIAIOSFODNN7EXAMPLE please");
        assert_eq!(r.value, "use [redacted: aws_access_key] please");
    }

    #[test]
    fn redaction_is_idempotent() {
        let v = json!({"cmd": "curl -H 'Authorization: Bearer abcdef0123456789' https://x", "password": "p"});
        let once = redact_value(&v).value;
        let twice = redact_value(&once);
        assert_eq!(twice.value, once);
    }

    #[test]
    fn luhn_and_entropy_helpers() {
        assert!(is_card_number("4111111111111111"));
        assert!(!is_card_number("4111111111111112"));
        assert!(!is_card_number("1764547199999")); // a timestamp, no card prefix
        assert!(entropy("aaaa") < 0.01);
        assert!(entropy("abcd") > 1.99);
    }
}
