//! Host facts gathered before a call reaches the ledger.
//!
//! Some guards ask the host (symlinks, file counts, DNS). That can block, and the
//! ledger is a single writer that must not wait on a disk walk or a resolver. So the
//! request handler evaluates once against [`Recorder`] (in parallel with other
//! requests), and the ledger evaluates again with the recorded answers ([`Recorded`]):
//! same facts, same decision, no blocking I/O in the writer.

use super::proposal::Proposal;
use policy::{Call, Host, Inputs, LocalHost, NoUsage, Policy, TreeStats};
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug, Default, Clone)]
pub struct Facts {
    paths: HashMap<PathBuf, Option<PathBuf>>,
    trees: HashMap<(PathBuf, u64), Option<TreeStats>>,
    hosts: HashMap<(String, u16), Option<Vec<IpAddr>>>,
}

/// Answers from this machine, remembered.
#[derive(Debug, Default)]
pub struct Recorder {
    facts: Mutex<Facts>,
}

impl Recorder {
    pub fn into_facts(self) -> Facts {
        self.facts.into_inner().unwrap_or_else(|p| p.into_inner())
    }
    fn with<R>(&self, f: impl FnOnce(&mut Facts) -> R) -> R {
        f(&mut self.facts.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Host for Recorder {
    fn resolve_path(&self, path: &Path) -> Option<PathBuf> {
        let r = LocalHost.resolve_path(path);
        self.with(|f| f.paths.insert(path.to_path_buf(), r.clone()));
        r
    }
    fn tree_stats(&self, path: &Path, stop_after: u64) -> Option<TreeStats> {
        let r = LocalHost.tree_stats(path, stop_after);
        self.with(|f| f.trees.insert((path.to_path_buf(), stop_after), r));
        r
    }
    fn resolve_host(&self, host: &str, port: u16) -> Option<Vec<IpAddr>> {
        let r = LocalHost.resolve_host(host, port);
        self.with(|f| f.hosts.insert((host.to_string(), port), r.clone()));
        r
    }
}

/// Recorded answers; a question that was not asked before is answered "unknown", which
/// every guard treats conservatively (lexical checks only).
pub struct Recorded<'a>(pub &'a Facts);

impl Host for Recorded<'_> {
    fn resolve_path(&self, path: &Path) -> Option<PathBuf> {
        self.0.paths.get(path).cloned().flatten()
    }
    fn tree_stats(&self, path: &Path, stop_after: u64) -> Option<TreeStats> {
        self.0.trees.get(&(path.to_path_buf(), stop_after)).copied().flatten()
    }
    fn resolve_host(&self, host: &str, port: u16) -> Option<Vec<IpAddr>> {
        self.0.hosts.get(&(host.to_string(), port)).cloned().flatten()
    }
}

/// A host that answers "unknown" and remembers whether it was asked: a pure evaluation
/// against it tells whether a call needs facts from this machine at all.
#[derive(Default)]
struct Probe(std::sync::atomic::AtomicBool);

impl Probe {
    fn asked(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Host for Probe {
    fn resolve_path(&self, _: &Path) -> Option<PathBuf> {
        self.asked();
        None
    }
    fn tree_stats(&self, _: &Path, _: u64) -> Option<TreeStats> {
        self.asked();
        None
    }
    fn resolve_host(&self, _: &str, _: u16) -> Option<Vec<IpAddr>> {
        self.asked();
        None
    }
}

fn evaluate(policy: &Policy, p: &Proposal, agent: &str, now_ms: i64, host: &dyn Host) {
    let call = Call {
        agent,
        tool: &p.tool,
        server: p.server.as_deref(),
        session_id: &p.session_id,
        turn_id: p.turn_id.as_deref(),
        arguments: &p.arguments,
        context: &p.context,
    };
    evaluate_call(policy, &call, now_ms, host)
}

fn evaluate_call(policy: &Policy, call: &Call, now_ms: i64, host: &dyn Host) {
    let _ = policy.evaluate(
        call,
        &Inputs {
            now_ms,
            usage: &NoUsage,
            grants: &[],
            host,
        },
    );
}

/// Does any guard of this call ask the host (no I/O: a pure evaluation)?
pub fn asks_host(policy: &Policy, p: &Proposal, agent: &str) -> bool {
    let probe = Probe::default();
    evaluate(policy, p, agent, 0, &probe);
    probe.0.into_inner()
}

/// Ask this machine what the call's guards want to know. Blocking: run it on the
/// blocking pool.
pub fn gather(policy: &Policy, p: &Proposal, agent: &str, now_ms: i64) -> Facts {
    let recorder = Recorder::default();
    evaluate(policy, p, agent, now_ms, &recorder);
    recorder.into_facts()
}

/// [`gather`] for a call that is not a fresh proposal (a reviewer's modification).
pub fn gather_call(policy: &Policy, call: &Call, now_ms: i64) -> Facts {
    let recorder = Recorder::default();
    evaluate_call(policy, call, now_ms, &recorder);
    recorder.into_facts()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn demo() -> Policy {
        let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../policies/demo.toml")).unwrap();
        Policy::from_toml(&src).unwrap()
    }

    fn proposal(tool: &str, arguments: serde_json::Value) -> Proposal {
        Proposal::from_json(json!({"session_id": "s", "tool": tool, "arguments": arguments})).unwrap()
    }

    #[test]
    fn only_calls_whose_guards_ask_the_host_go_to_the_blocking_pool() {
        let p = demo();
        // Path guards ask for symlinks: gathered off the runtime.
        assert!(asks_host(&p, &proposal("read_file", json!({"path": "a.txt"})), "a"));
        // No guard that looks at the host: nothing to gather, no blocking task.
        assert!(!asks_host(&p, &proposal("web_search", json!({"query": "q"})), "a"));
        assert!(!asks_host(
            &p,
            &proposal("execute_command", json!({"command": "ls"})),
            "a"
        ));
        // Refused before any guard: nothing to ask either.
        assert!(!asks_host(&p, &proposal("read_file", json!({"path": 5})), "a"));
    }
}
