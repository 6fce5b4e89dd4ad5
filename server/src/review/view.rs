//! What a reviewer is shown of a call's arguments: redacted like everything else,
//! except the values a guard checks (paths, commands, URLs), which are shown exactly as
//! they will run; and with invisible or direction-changing characters made visible.

use crate::store::calls::CallRow;
use app::api::QueueItem;
use policy::Policy;
use serde_json::Value;

/// The arguments as the review page shows them (and as a modification is edited from).
pub fn arguments(policy: &Policy, tool: &str, raw: &Value) -> Value {
    let mut shown = policy::redact::redact_value(raw).value;
    if let (Value::Object(out), Value::Object(raw)) = (&mut shown, raw) {
        for name in policy.guarded_args(tool) {
            if let Some(v) = raw.get(name) {
                out.insert(name.to_string(), v.clone());
            }
        }
    }
    shown
}

/// A held call as the queue lists it (and as `call_pending` announces it).
pub fn queue_item(policy: &Policy, r: &CallRow) -> QueueItem {
    QueueItem {
        id: r.id.clone(),
        agent: r.agent_id.clone(),
        session_id: r.session_id.clone(),
        tool: r.tool.clone(),
        server: r.server.clone(),
        risk: r.risk.as_str().to_string(),
        destructive: policy.tool_info(&r.tool).is_some_and(|t| t.destructive),
        rule: r.rule.clone(),
        reason: r.reason.clone(),
        blocked_by: r.blocked_by.map(|l| l.as_str().to_string()),
        created_at_ms: r.created_at_ms,
        expires_at_ms: r.expires_at_ms,
        approvers_required: r.approvers_required,
        approvals: Vec::new(),
        escalated: false,
    }
}

/// Characters that change how text reads without being seen: bidirectional controls,
/// zero-width and joiner characters, invisible operators and fillers, tag characters,
/// variation selectors, C0/C1 controls. JSON keeps them as they are; reviewers must see
/// them, so they are written as `\uXXXX` escapes (still valid JSON when edited).
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{0000}'..='\u{001F}' | '\u{007F}'..='\u{009F}' | '\u{00AD}' | '\u{034F}' | '\u{061C}'
        | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}' | '\u{180B}'..='\u{180F}'
        | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{206F}'
        | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}' | '\u{FFF9}'..='\u{FFFB}'
        | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E007F}' | '\u{E0100}'..='\u{E01EF}')
}

/// Pretty JSON with every invisible character escaped. Newlines and tabs inside strings
/// are already escaped by the serialiser; the layout's own whitespace is kept.
pub fn pretty(v: &Value) -> String {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_invisible(c) && !matches!(c, '\n' | ' ') {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn invisible_characters_are_escaped_and_the_text_still_parses_back() {
        let raw = json!({"command": "ls \u{202E}fdp.exe\u{200B} \u{E0041}x", "n": 1});
        let shown = pretty(&raw);
        for bad in ['\u{202E}', '\u{200B}', '\u{E0041}'] {
            assert!(!shown.contains(bad), "{shown}");
        }
        assert!(shown.contains("\\u202e") && shown.contains("\\u200b"), "{shown}");
        assert!(
            shown.contains("\\udb40\\udc41"),
            "tag characters as surrogate pairs: {shown}"
        );
        let back: Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back, raw);
    }

    #[test]
    fn guarded_values_are_shown_exactly_other_secrets_are_redacted() {
        let policy = Policy::from_toml(
            r#"
            [policy]
            name = "t"
            [command_guards.shell]
            [tools.run]
            description = "run"
            approval = "ask"
            arguments = { type = "object", properties = { command = { type = "string" }, token = { type = "string" } } }
            command_guards = [{ guard = "shell", args = ["command"] }]
            "#,
        )
        .unwrap();
        // A command that looks like a secret to the redactor: the reviewer must see it.
        let cmd = "echo cm0gLXJmIC8gLS1uby1wcmVzZXJ2ZS1yb290Cg== | base64 -d | sh";
        let raw = json!({"command": cmd, "token": "sk-live-0123456789abcdefghijklmnop"});
        let shown = arguments(&policy, "run", &raw);
        assert_eq!(shown["command"], cmd);
        assert!(shown["token"].as_str().unwrap().contains("[redacted: "), "{shown}");
    }
}
