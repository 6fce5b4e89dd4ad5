//! With `resolve = true` the decision pins the normalised URL, its port and the checked
//! addresses, so the executor fetches exactly what was judged.

use policy::{Call, Host, Inputs, NoUsage, Policy, Status, TreeStats};
use serde_json::json;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

const POLICY: &str = r#"
[policy]
name = "pin"

[url_guards.web]
resolve = true

[tools.web_fetch]
description = "Fetch a page."
risk = "low"
approval = "auto"
arguments = { type = "object", required = ["url"], properties = { url = { type = "string" } } }
url_guards = [{ guard = "web", args = ["url"] }]
"#;

struct Dns(&'static str);
impl Host for Dns {
    fn resolve_path(&self, _: &Path) -> Option<PathBuf> {
        None
    }
    fn tree_stats(&self, _: &Path, _: u64) -> Option<TreeStats> {
        None
    }
    fn resolve_host(&self, _: &str, _: u16) -> Option<Vec<IpAddr>> {
        Some(vec![self.0.parse().unwrap()])
    }
}

fn fetch(url: &str, dns: &Dns) -> policy::Decision {
    let p = Policy::from_toml(POLICY).unwrap_or_else(|e| panic!("{e}"));
    let args = json!({ "url": url });
    p.evaluate(
        &Call {
            agent: "a1",
            tool: "web_fetch",
            server: None,
            session_id: "s",
            turn_id: None,
            arguments: &args,
            context: &serde_json::Value::Null,
        },
        &Inputs {
            now_ms: 0,
            usage: &NoUsage,
            grants: &[],
            host: dns,
        },
    )
}

#[test]
fn resolved_urls_are_pinned_with_their_normalised_form_and_port() {
    let d = fetch("HTTPS://Example.COM:8443/a/../b?q=1", &Dns("93.184.215.14"));
    assert_eq!(d.status, Status::Allowed, "{}", d.reason);
    assert_eq!(
        serde_json::to_value(&d.pinned).unwrap(),
        json!([{ "url": "https://example.com:8443/b?q=1", "host": "example.com", "port": 8443,
                 "addresses": ["93.184.215.14"] }])
    );
    // A name that resolves to a private address is denied, not pinned.
    let d = fetch("https://example.com/", &Dns("10.1.2.3"));
    assert_eq!(d.status, Status::Denied);
    assert!(d.pinned.is_empty());
}
