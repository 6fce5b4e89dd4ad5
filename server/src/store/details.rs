//! What the engine said about a call beyond its columns, stored once with the call as
//! JSON (`tool_calls.details`): one typed struct for every writer and reader. Fields that
//! are empty or false are left out, so most calls store `{}`. Unknown keys of older rows
//! (e.g. `pinned`, which has its own column) are ignored when read.

use policy::{Decision, UsageDelta};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallDetails {
    /// What rules in shadow mode would have done.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shadow: Vec<Shadow>,
    /// What the call would affect (file-moving tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impact: Option<Impact>,
    /// Values redaction masked in the stored arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub masked: Vec<Masked>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub destructive: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub break_glass: bool,
    /// May a reviewer answer it with an approve-all grant?
    #[serde(default, skip_serializing_if = "is_false")]
    pub grantable: bool,
    /// Held calls: why no grant is offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_grantable: Option<String>,
    /// Held calls: the budget charges a reviewer's modification must replace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub charged: Vec<UsageDelta>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shadow {
    pub layer: String,
    pub rule: String,
    pub would: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Impact {
    pub paths: Vec<String>,
    pub stats: Option<TreeStats>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeStats {
    pub files: u64,
    pub bytes: u64,
    pub complete: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Masked {
    /// JSON Pointer of the value.
    pub path: String,
    pub kind: String,
}

fn is_false(b: &bool) -> bool {
    !b
}

impl CallDetails {
    /// The details of a fresh decision; `masked` from redacting the arguments.
    pub fn of(d: &Decision, masked: &[policy::redact::Masked]) -> CallDetails {
        let held = d.status == policy::Status::Pending;
        CallDetails {
            shadow: shadow_of(d),
            impact: impact_of(d),
            masked: masked
                .iter()
                .map(|m| Masked {
                    path: m.path.clone(),
                    kind: m.kind.to_string(),
                })
                .collect(),
            destructive: d.destructive,
            break_glass: d.break_glass,
            grantable: d.grantable,
            not_grantable: if held { d.not_grantable.clone() } else { None },
            charged: if held { d.usage.clone() } else { Vec::new() },
        }
    }

    /// Replace what a reviewer's modification changed: its charges and what it affects.
    pub fn modified(&mut self, d: &Decision, charged: Vec<UsageDelta>) {
        self.charged = charged;
        self.impact = impact_of(d);
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }

    /// Read stored details; unreadable ones count as none (the safe reading: no grant).
    pub fn parse(s: &str) -> CallDetails {
        serde_json::from_str(s).unwrap_or_default()
    }
}

fn shadow_of(d: &Decision) -> Vec<Shadow> {
    d.shadow
        .iter()
        .map(|f| Shadow {
            layer: f.layer.as_str().to_string(),
            rule: f.rule.clone(),
            would: f.would.as_str().to_string(),
            reason: f.reason.clone(),
        })
        .collect()
}

fn impact_of(d: &Decision) -> Option<Impact> {
    d.impact.as_ref().map(|i| Impact {
        paths: i.paths.clone(),
        stats: i.stats.as_ref().map(|s| TreeStats {
            files: s.files,
            bytes: s.bytes,
            complete: s.complete,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_details_are_stored_as_an_empty_object_and_old_rows_still_read() {
        assert_eq!(CallDetails::default().to_json(), "{}");
        // A row written before this struct: every key present, `pinned` included.
        let old = r#"{"shadow":[{"layer":"rule","rule":"r","would":"pending","reason":"x"}],
            "impact":{"paths":["/a"],"stats":{"files":3,"bytes":300,"complete":true}},
            "pinned":[],"masked":[{"path":"/token","kind":"secret"}],"destructive":true,
            "break_glass":false,"grantable":true,"charged":[],"not_grantable":null}"#;
        let d = CallDetails::parse(old);
        assert!(d.destructive && d.grantable && !d.break_glass);
        assert_eq!(d.shadow[0].would, "pending");
        assert_eq!(d.impact.as_ref().unwrap().stats.as_ref().unwrap().files, 3);
        assert_eq!(d.masked[0].path, "/token");
        assert_eq!(CallDetails::parse(&d.to_json()), d);
        // Unreadable details grant nothing.
        assert!(!CallDetails::parse("not json").grantable);
    }
}
