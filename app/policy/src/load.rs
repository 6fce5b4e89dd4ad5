//! Loading a policy file: parse, validate everything, compile once.
//!
//! Every problem found is reported (not only the first), each with its location: a
//! line and column for syntax errors and unknown keys, a key path such as
//! `tools.refund_order.rules[1].when` for semantic ones.

use crate::budget::Budget;
use crate::config::{PolicyFile, RuleAction};
use crate::engine::{CommandUse, PathUse, Policy, Rule, Tool, UrlUse};
use crate::expr::Expr;
use crate::guards::{command::CommandGuard, path::Fence, url::UrlGuard};
use crate::json::JsonLimits;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// `line L, column C` or a key path.
    pub location: String,
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// All problems found in a policy file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadErrors(pub Vec<LoadError>);

impl fmt::Display for LoadErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadErrors {}

impl LoadError {
    /// The line of `src` this problem is about: the one a syntax error names, or the table
    /// header (and key, when present) a key path leads to. For editors that mark it.
    pub fn line(&self, src: &str) -> Option<usize> {
        line_of(src, &self.location)
    }
}

/// The line a location (`line L, column C`, or a key path such as
/// `tools.write_file.rules[1].when`) refers to in `src`, if it can be found.
pub fn line_of(src: &str, location: &str) -> Option<usize> {
    if let Some(rest) = location.strip_prefix("line ") {
        return rest.split(',').next()?.trim().parse().ok();
    }
    // `a.b[2].c` → ["a", "b", "2", "c"]: array indices are segments of their own.
    let want: Vec<&str> = location
        .split(['.', '['])
        .map(|p| p.trim_end_matches(']'))
        .filter(|p| !p.is_empty())
        .collect();
    let mut best: Option<(usize, usize)> = None; // (segments matched, line)
    let mut table: Vec<String> = Vec::new();
    let mut arrays: HashMap<String, usize> = HashMap::new();
    for (i, raw) in src.lines().enumerate() {
        let line = raw.trim();
        let header = line
            .strip_prefix("[[")
            .and_then(|l| l.split("]]").next())
            .map(|h| (h, true))
            .or_else(|| {
                line.strip_prefix('[')
                    .and_then(|l| l.split(']').next())
                    .map(|h| (h, false))
            });
        if let Some((h, is_array)) = header {
            table = h.split('.').map(|p| p.trim().trim_matches('"').to_string()).collect();
            if is_array {
                let n = arrays.entry(h.to_string()).and_modify(|n| *n += 1).or_insert(0);
                table.push(n.to_string());
            }
        } else if let Some((key, _)) = line.split_once('=') {
            let key = key.trim().trim_matches('"');
            if key.is_empty() || key.starts_with('#') {
                continue;
            }
            let mut path = table.clone();
            path.push(key.to_string());
            score(&path, &want, i + 1, &mut best);
            continue;
        } else {
            continue;
        }
        score(&table, &want, i + 1, &mut best);
    }
    best.map(|(_, line)| line)
}

/// Keep `line` when `path` is a longer prefix of `want` than the best so far.
fn score(path: &[String], want: &[&str], line: usize, best: &mut Option<(usize, usize)>) {
    if path.len() > want.len() || path.iter().zip(want).any(|(a, b)| a != b) {
        return;
    }
    if best.is_none_or(|(n, _)| path.len() > n) {
        *best = Some((path.len(), line));
    }
}

/// `30s`, `15m`, `2h`, `1d`, `500ms` → milliseconds.
pub fn parse_duration_ms(s: &str) -> Result<i64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: i64 = num
        .parse()
        .map_err(|_| format!("bad duration {s:?}; write e.g. \"30s\", \"15m\", \"2h\", \"1d\""))?;
    let mult = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(format!("bad duration unit in {s:?}; use ms, s, m, h or d")),
    };
    if n <= 0 {
        return Err(format!("duration {s:?} must be positive"));
    }
    n.checked_mul(mult).ok_or_else(|| format!("duration {s:?} is too long"))
}

pub fn format_duration_ms(ms: i64) -> String {
    for (unit, m) in [("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000)] {
        if ms % m == 0 {
            return format!("{}{unit}", ms / m);
        }
    }
    format!("{ms}ms")
}

fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let before = &src[..offset.min(src.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Canonical JSON: object keys sorted, no whitespace. Independent of serde_json features.
/// Written into one buffer (no allocation per key or value): the audit chain runs this
/// for every event in its serial writer.
pub fn canonical_json(v: &Value, out: &mut String) {
    let mut buf = std::mem::take(out).into_bytes();
    write_canonical(v, &mut buf);
    *out = String::from_utf8(buf).expect("serde_json writes UTF-8");
}

fn write_canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (k, x)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, k).expect("writing to a Vec cannot fail");
                out.push(b':');
                write_canonical(x, out);
            }
            out.push(b'}');
        }
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(x, out);
            }
            out.push(b']');
        }
        other => serde_json::to_writer(&mut *out, other).expect("writing to a Vec cannot fail"),
    }
}

/// `sha256:<hex>` of the canonical content: comments and layout do not change it.
fn version_of(doc: &toml::Value) -> Result<String, String> {
    let json = serde_json::to_value(doc).map_err(|e| e.to_string())?;
    let mut canon = String::new();
    canonical_json(&json, &mut canon);
    let mut h = Sha256::new();
    h.update(b"airlock-policy-v1\0");
    h.update(canon.as_bytes());
    Ok(format!("sha256:{}", hex(&h.finalize())))
}

pub fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// Make object schemas refuse unknown fields unless the author said otherwise.
fn strictify(schema: &mut Value) {
    let Value::Object(m) = schema else { return };
    let is_object = m.get("type").is_some_and(|t| t == "object") || m.contains_key("properties");
    if is_object && !m.contains_key("additionalProperties") && !m.contains_key("unevaluatedProperties") {
        m.insert("additionalProperties".into(), Value::Bool(false));
    }
    for key in ["properties", "$defs", "patternProperties"] {
        if let Some(Value::Object(props)) = m.get_mut(key) {
            for v in props.values_mut() {
                strictify(v);
            }
        }
    }
    if let Some(items) = m.get_mut("items") {
        strictify(items);
    }
    if let Some(Value::Array(items)) = m.get_mut("prefixItems") {
        items.iter_mut().for_each(strictify);
    }
}

fn compile_schema(raw: &toml::Value) -> Result<(jsonschema::Validator, Value), String> {
    let mut schema = serde_json::to_value(raw).map_err(|e| e.to_string())?;
    let Value::Object(m) = &schema else {
        return Err("arguments must be a JSON Schema object".into());
    };
    if m.get("type") != Some(&Value::String("object".into())) {
        return Err("arguments schema must have type = \"object\"".into());
    }
    if let Some(s) = m.get("$schema") {
        if s != "https://json-schema.org/draft/2020-12/schema" {
            return Err(format!("only JSON Schema 2020-12 is supported, not {s}"));
        }
    }
    strictify(&mut schema);
    let v = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(&schema)
        .map_err(|e| format!("schema does not compile: {e}"))?;
    Ok((v, schema))
}

impl Policy {
    /// Parse and compile a policy. On failure, every problem found, with its location.
    pub fn from_toml(src: &str) -> Result<Policy, LoadErrors> {
        let err1 = |location: String, message: String| LoadErrors(vec![LoadError { location, message }]);
        let doc: toml::Value = toml::from_str(src).map_err(|e| {
            let loc = e.span().map_or("policy".to_string(), |s| {
                let (l, c) = line_col(src, s.start);
                format!("line {l}, column {c}")
            });
            err1(loc, e.message().to_string())
        })?;
        let file: PolicyFile = toml::from_str(src).map_err(|e| {
            let loc = e.span().map_or("policy".to_string(), |s| {
                let (l, c) = line_col(src, s.start);
                format!("line {l}, column {c}")
            });
            err1(loc, e.message().to_string())
        })?;
        let version = version_of(&doc).map_err(|m| err1("policy".into(), m))?;
        compile(file, version)
    }
}

fn compile(file: PolicyFile, version: String) -> Result<Policy, LoadErrors> {
    let mut errors: Vec<LoadError> = Vec::new();
    let mut err = |location: String, message: String| errors.push(LoadError { location, message });

    let default_expiry_ms = parse_duration_ms(&file.policy.default_expiry).unwrap_or_else(|m| {
        err("policy.default_expiry".into(), m);
        0
    });
    if file.policy.max_argument_depth == 0 || file.policy.max_argument_depth > 128 {
        err("policy.max_argument_depth".into(), "must be between 1 and 128".into());
    }
    if file.policy.max_argument_bytes == 0 {
        err("policy.max_argument_bytes".into(), "must be positive".into());
    }

    let mut fences = HashMap::new();
    for (name, c) in &file.fences {
        match Fence::new(name, c) {
            Ok(f) => {
                fences.insert(name.clone(), Arc::new(f));
            }
            Err(m) => err(format!("fences.{name}"), m),
        }
    }
    let mut url_guards = HashMap::new();
    for (name, c) in &file.url_guards {
        match UrlGuard::new(name, c) {
            Ok(g) => {
                url_guards.insert(name.clone(), Arc::new(g));
            }
            Err(m) => err(format!("url_guards.{name}"), m),
        }
    }
    let mut command_guards = HashMap::new();
    for (name, c) in &file.command_guards {
        match CommandGuard::new(name, c) {
            Ok(g) => {
                command_guards.insert(name.clone(), Arc::new(g));
            }
            Err(m) => err(format!("command_guards.{name}"), m),
        }
    }

    let mut budget_ids: HashMap<String, String> = HashMap::new();
    let mut budgets = Vec::new();
    for (i, b) in file.budgets.iter().enumerate() {
        let loc = format!("budgets[{i}]");
        match Budget::new(b) {
            Ok(b) => {
                if let Some(prev) = budget_ids.insert(b.id.clone(), loc.clone()) {
                    err(loc, format!("budget id {:?} is already used at {prev}", b.id));
                } else {
                    budgets.push(b);
                }
            }
            Err(m) => err(loc, m),
        }
    }

    let mut tools = HashMap::new();
    let mut rule_ids: HashMap<String, String> = HashMap::new();
    if file.tools.is_empty() {
        err("tools".into(), "a policy needs at least one tool".into());
    }
    for (name, t) in &file.tools {
        let base = format!("tools.{name}");
        if let Err(p) = crate::name::check(name) {
            err(base.clone(), p.to_string());
        }
        let schema = match compile_schema(&t.arguments) {
            Ok(s) => Some(s),
            Err(m) => {
                err(format!("{base}.arguments"), m);
                None
            }
        };
        let expiry_ms = match &t.expiry {
            None => default_expiry_ms,
            Some(e) => parse_duration_ms(e).unwrap_or_else(|m| {
                err(format!("{base}.expiry"), m);
                0
            }),
        };
        if t.approvers == 0 || t.approvers > 5 {
            err(format!("{base}.approvers"), "must be between 1 and 5".into());
        }
        let arg_names: Vec<String> = schema
            .as_ref()
            .and_then(|(_, s)| s.get("properties"))
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let check_args = |loc: String, args: &[String], err: &mut dyn FnMut(String, String)| {
            if args.is_empty() {
                err(loc.clone(), "args must name at least one argument".into());
            }
            for a in args {
                if schema.is_some() && !arg_names.contains(a) {
                    err(
                        loc.clone(),
                        format!("argument {a:?} is not a property of the tool's schema"),
                    );
                }
            }
        };
        let mut path_guards = Vec::new();
        for (i, g) in t.path_guards.iter().enumerate() {
            let loc = format!("{base}.path_guards[{i}]");
            check_args(loc.clone(), &g.args, &mut err);
            match fences.get(&g.fence) {
                Some(f) => path_guards.push(PathUse {
                    fence: f.clone(),
                    args: g.args.clone(),
                    max_files: g.max_files,
                    shadow: g.shadow,
                }),
                None => err(loc, format!("fence {:?} is not defined under [fences]", g.fence)),
            }
        }
        let mut cmd_guards = Vec::new();
        for (i, g) in t.command_guards.iter().enumerate() {
            let loc = format!("{base}.command_guards[{i}]");
            check_args(loc.clone(), &g.args, &mut err);
            if let Some(c) = &g.cwd {
                check_args(format!("{loc}.cwd"), std::slice::from_ref(c), &mut err);
            }
            match command_guards.get(&g.guard) {
                Some(c) => cmd_guards.push(CommandUse {
                    guard: c.clone(),
                    args: g.args.clone(),
                    cwd: g.cwd.clone(),
                    shadow: g.shadow,
                }),
                None => err(
                    loc,
                    format!("command guard {:?} is not defined under [command_guards]", g.guard),
                ),
            }
        }
        let mut u_guards = Vec::new();
        for (i, g) in t.url_guards.iter().enumerate() {
            let loc = format!("{base}.url_guards[{i}]");
            check_args(loc.clone(), &g.args, &mut err);
            match url_guards.get(&g.guard) {
                Some(u) => u_guards.push(UrlUse {
                    guard: u.clone(),
                    args: g.args.clone(),
                    shadow: g.shadow,
                }),
                None => err(
                    loc,
                    format!("URL guard {:?} is not defined under [url_guards]", g.guard),
                ),
            }
        }
        let mut tool_budgets = Vec::new();
        for (i, b) in t.budgets.iter().enumerate() {
            let loc = format!("{base}.budgets[{i}]");
            match Budget::new(b) {
                Ok(b) => {
                    if let Some(f) = b.field() {
                        if schema.is_some() && !arg_names.iter().any(|a| a == f) {
                            err(
                                loc.clone(),
                                format!("field {f:?} is not a property of the tool's schema"),
                            );
                        }
                    }
                    if let Some(prev) = budget_ids.insert(b.id.clone(), loc.clone()) {
                        err(loc, format!("budget id {:?} is already used at {prev}", b.id));
                    } else {
                        tool_budgets.push(b);
                    }
                }
                Err(m) => err(loc, m),
            }
        }
        let mut rules = Vec::new();
        for (i, r) in t.rules.iter().enumerate() {
            let loc = format!("{base}.rules[{i}]");
            if r.id.trim().is_empty() {
                err(format!("{loc}.id"), "rule id must not be empty".into());
            }
            if let Some(prev) = rule_ids.insert(r.id.clone(), loc.clone()) {
                err(
                    format!("{loc}.id"),
                    format!("rule id {:?} is already used at {prev}", r.id),
                );
            }
            if let Some(a) = r.approvers {
                if a == 0 || a > 5 {
                    err(format!("{loc}.approvers"), "must be between 1 and 5".into());
                }
                if r.action == RuleAction::Deny {
                    err(format!("{loc}.approvers"), "a deny rule has no approvers".into());
                }
            }
            match Expr::parse(&r.when) {
                Ok(expr) => rules.push(Rule {
                    id: r.id.clone(),
                    reason: r.reason.clone().unwrap_or_else(|| format!("{} ({})", r.id, r.when)),
                    expr,
                    action: r.action,
                    approvers: r.approvers.unwrap_or(t.approvers),
                    grantable: r.grantable,
                    shadow: r.shadow,
                }),
                Err(e) => err(format!("{loc}.when"), format!("{e} in {:?}", r.when)),
            }
        }
        if let Some((validator, schema_json)) = schema {
            tools.insert(
                name.clone(),
                Tool {
                    name: name.clone(),
                    description: t.description.clone(),
                    risk: t.risk,
                    destructive: t.destructive,
                    server: t.server.clone(),
                    validator,
                    schema: schema_json,
                    approval: t.approval,
                    approvers: t.approvers,
                    expiry_ms,
                    break_glass: t.break_glass,
                    grantable: t.grantable.unwrap_or(!t.destructive),
                    path_guards,
                    command_guards: cmd_guards,
                    url_guards: u_guards,
                    budgets: tool_budgets,
                    rules,
                },
            );
        }
    }

    if !errors.is_empty() {
        return Err(LoadErrors(errors));
    }
    Ok(Policy {
        name: file.policy.name,
        description: file.policy.description,
        version: Arc::from(version.as_str()),
        limits: JsonLimits {
            max_bytes: file.policy.max_argument_bytes,
            max_depth: file.policy.max_argument_depth,
        },
        tools,
        budgets,
    })
}

/// Convenience for tests and tools: a schema as `serde_json::Value` → TOML value.
pub fn json_to_toml(v: &Value) -> Option<toml::Value> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => n
            .as_i64()
            .map(toml::Value::Integer)
            .or_else(|| n.as_f64().map(toml::Value::Float))?,
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Array(a) => toml::Value::Array(a.iter().filter_map(json_to_toml).collect()),
        Value::Object(o) => {
            let mut t = toml::map::Map::new();
            for (k, v) in o {
                if let Some(v) = json_to_toml(v) {
                    t.insert(k.clone(), v);
                }
            }
            toml::Value::Table(t)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
[policy]
name = "t"

[tools.echo]
arguments = { type = "object", properties = { text = { type = "string" } } }
"#;

    #[test]
    fn key_paths_lead_to_their_lines() {
        let src = [
            "[policy]",
            "name = \"t\"",
            "",
            "[tools.echo]",
            "arguments = { type = \"object\" }",
            "expiry = \"soon\"",
            "",
            "[[tools.echo.rules]]",
            "id = \"a\"",
            "when = \"true\"",
            "action = \"ask\"",
            "[[tools.echo.rules]]",
            "id = \"b\"",
            "when = \"x ==\"",
            "action = \"ask\"",
        ]
        .join("\n");
        assert_eq!(line_of(&src, "tools.echo.expiry"), Some(6));
        assert_eq!(line_of(&src, "tools.echo.rules[1].when"), Some(14));
        assert_eq!(line_of(&src, "tools.echo.rules[0]"), Some(8));
        assert_eq!(
            line_of(&src, "tools.echo.approvers"),
            Some(4),
            "the table, when the key is absent"
        );
        assert_eq!(line_of(&src, "line 3, column 1"), Some(3));
        assert_eq!(line_of(&src, "fences.none"), None);
        // Real compile errors find their lines.
        let e = errors(&src);
        let line = |suffix: &str| {
            let found = e.iter().find(|e| e.location.ends_with(suffix));
            found.unwrap_or_else(|| panic!("{e:?}")).line(&src)
        };
        assert_eq!(line(".when"), Some(14), "{e:?}");
        assert_eq!(line(".expiry"), Some(6), "{e:?}");
    }

    fn errors(src: &str) -> Vec<LoadError> {
        match Policy::from_toml(src) {
            Ok(_) => panic!("loaded"),
            Err(e) => e.0,
        }
    }

    #[test]
    fn a_minimal_policy_loads() {
        let p = Policy::from_toml(MINIMAL).unwrap();
        assert!(p.version.starts_with("sha256:"));
        assert_eq!(p.version.len(), 7 + 64);
    }

    #[test]
    fn the_version_ignores_comments_and_layout_but_not_content() {
        let a = Policy::from_toml(MINIMAL).unwrap().version;
        let b = Policy::from_toml(&format!("# comment\n\n{MINIMAL}\n\n"))
            .unwrap()
            .version;
        assert_eq!(a, b);
        let c = Policy::from_toml(&MINIMAL.replace("name = \"t\"", "name = \"u\""))
            .unwrap()
            .version;
        assert_ne!(a, c);
    }

    #[test]
    fn unknown_keys_are_rejected_with_line_and_column() {
        let src = MINIMAL.replace("[tools.echo]", "[tools.echo]\naproval = \"ask\"");
        let e = errors(&src);
        assert_eq!(e.len(), 1);
        assert!(e[0].location.starts_with("line 6"), "{e:?}");
        assert_eq!(e[0].line(""), Some(6));
        assert!(e[0].message.contains("aproval"), "{e:?}");
    }

    #[test]
    fn syntax_errors_have_a_line() {
        let e = errors("[policy\nname = 1");
        assert!(e[0].location.starts_with("line 1"), "{e:?}");
    }

    #[test]
    fn command_guard_cwd_must_name_an_argument() {
        let src = r#"
[policy]
name = "t"

[command_guards.sh]

[tools.run]
arguments = { type = "object", properties = { command = { type = "string" } } }
command_guards = [{ guard = "sh", args = ["command"], cwd = "dir" }]
"#;
        let e = errors(src);
        assert!(
            e.iter().any(|e| e.location == "tools.run.command_guards[0].cwd"),
            "{e:?}"
        );
    }

    #[test]
    fn semantic_errors_are_all_reported_with_key_paths() {
        let src = r#"
[policy]
name = "t"
default_expiry = "soon"

[fences.ws]
roots = ["relative/root"]

[tools.Bad_Name]
arguments = { type = "object" }

[tools.refund]
approvers = 9
arguments = { type = "object", properties = { amount = { type = "number" }, id = { type = "string", pattern = "(" } } }
path_guards = [{ fence = "nope", args = ["missing"] }]
url_guards = [{ guard = "nope", args = ["amount"] }]
rules = [
  { id = "r1", when = "args.amount >", action = "ask" },
  { id = "r1", when = "args.amount > 1", action = "deny", approvers = 2 },
]
budgets = [{ id = "b", kind = "amount", scope = "day", limit = 10, field = "nope" }]
"#;
        let e = errors(src);
        let locs: Vec<&str> = e.iter().map(|e| e.location.as_str()).collect();
        for want in [
            "policy.default_expiry",
            "fences.ws",
            "tools.Bad_Name",
            "tools.refund.arguments",
            "tools.refund.approvers",
            "tools.refund.path_guards[0]",
            "tools.refund.url_guards[0]",
            "tools.refund.rules[0].when",
            "tools.refund.rules[1].id",
            "tools.refund.rules[1].approvers",
        ] {
            assert!(locs.contains(&want), "missing {want} in {locs:?}");
        }
    }

    #[test]
    fn schemas_must_describe_objects_and_compile() {
        let src = MINIMAL.replace(
            "arguments = { type = \"object\", properties = { text = { type = \"string\" } } }",
            "arguments = { type = \"string\" }",
        );
        assert!(errors(&src)[0].message.contains("type = \"object\""));
        let src = MINIMAL.replace("type = \"string\" }", "type = \"strng\" }");
        assert!(errors(&src)[0].message.contains("does not compile"));
        let src = MINIMAL.replace(
            "arguments = {",
            "arguments = { \"$ref\" = \"https://example.com/s.json\",",
        );
        assert!(errors(&src)[0].message.contains("does not compile"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("15m"), Ok(900_000));
        assert_eq!(parse_duration_ms("2h"), Ok(7_200_000));
        assert_eq!(parse_duration_ms("250ms"), Ok(250));
        assert!(parse_duration_ms("0s").is_err());
        assert!(parse_duration_ms("5 minutes").is_err());
        assert!(parse_duration_ms("m").is_err());
        assert_eq!(format_duration_ms(60_000), "1m");
        assert_eq!(format_duration_ms(1_500), "1500ms");
    }

    #[test]
    fn strictify_adds_additional_properties_false_to_objects() {
        let mut s = serde_json::json!({"type":"object","properties":{"a":{"type":"object","properties":{}}, "b": {"type":"array","items":{"type":"object"}}}});
        strictify(&mut s);
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["properties"]["a"]["additionalProperties"], false);
        assert_eq!(s["properties"]["b"]["items"]["additionalProperties"], false);
        let mut open = serde_json::json!({"type":"object","additionalProperties": true});
        strictify(&mut open);
        assert_eq!(open["additionalProperties"], true);
    }
}
