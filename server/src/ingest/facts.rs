//! Host facts gathered before a call reaches the ledger.
//!
//! Some guards ask the host (symlinks, file counts, DNS). That can block, and the
//! ledger is a single writer that must not wait on a disk walk or a resolver. So the
//! request handler evaluates once against [`Recorder`] (in parallel with other
//! requests), and the ledger evaluates again with the recorded answers ([`Recorded`]):
//! same facts, same decision, no blocking I/O in the writer. Lookups run on the blocking
//! pool, not on the async runtime; path answers are reused for a second ([`PathCache`]).

use super::proposal::Proposal;
use crate::host::LocalHost;
use policy::{Call, Host, Policy, TreeStats};
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Facts {
    paths: HashMap<PathBuf, Option<PathBuf>>,
    trees: HashMap<(PathBuf, u64), Option<TreeStats>>,
    hosts: HashMap<(String, u16), Option<Vec<IpAddr>>>,
}

/// A directory tree's stats as stored: (files, bytes, complete).
type StoredTree = (u64, u64, bool);

/// Facts as stored with a call: lists, since JSON object keys are strings only.
#[derive(serde::Serialize, serde::Deserialize, Default)]
struct Stored {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    paths: Vec<StoredPath>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    trees: Vec<(PathBuf, u64, Option<StoredTree>)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    hosts: Vec<(String, u16, Option<Vec<IpAddr>>)>,
}

/// A path's answer as stored: the path alone when it resolved to itself (the usual case),
/// else the path and what it resolved to (`null`: it does not resolve).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
enum StoredPath {
    Itself(PathBuf),
    Resolved(PathBuf, Option<PathBuf>),
}

impl StoredPath {
    fn of(path: &Path, resolved: &Option<PathBuf>) -> StoredPath {
        match resolved {
            Some(r) if r == path => StoredPath::Itself(path.to_path_buf()),
            r => StoredPath::Resolved(path.to_path_buf(), r.clone()),
        }
    }
    fn key(&self) -> &Path {
        match self {
            StoredPath::Itself(p) | StoredPath::Resolved(p, _) => p,
        }
    }
    fn into_pair(self) -> (PathBuf, Option<PathBuf>) {
        match self {
            StoredPath::Itself(p) => (p.clone(), Some(p)),
            StoredPath::Resolved(p, r) => (p, r),
        }
    }
}

impl Facts {
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty() && self.trees.is_empty() && self.hosts.is_empty()
    }

    /// The stored form (JSON), or `None` when nothing was asked.
    pub fn to_json(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let mut s = Stored {
            paths: self.paths.iter().map(|(k, v)| StoredPath::of(k, v)).collect(),
            trees: self
                .trees
                .iter()
                .map(|((p, n), t)| (p.clone(), *n, t.map(|t| (t.files, t.bytes, t.complete))))
                .collect(),
            hosts: self
                .hosts
                .iter()
                .map(|((h, p), a)| (h.clone(), *p, a.clone()))
                .collect(),
        };
        // The same facts store the same text.
        s.paths.sort_by(|a, b| a.key().cmp(b.key()));
        s.trees.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        s.hosts.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        serde_json::to_string(&s).ok()
    }

    /// Read stored facts; unreadable ones are none (every guard then judges lexically).
    pub fn from_json(text: &str) -> Facts {
        let s: Stored = serde_json::from_str(text).unwrap_or_default();
        Facts {
            paths: s.paths.into_iter().map(StoredPath::into_pair).collect(),
            trees: s
                .trees
                .into_iter()
                .map(|(p, n, t)| {
                    (
                        (p, n),
                        t.map(|(files, bytes, complete)| TreeStats { files, bytes, complete }),
                    )
                })
                .collect(),
            hosts: s.hosts.into_iter().map(|(h, p, a)| ((h, p), a)).collect(),
        }
    }
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

/// Recorded answers for a replay, noting whether the policy asked anything that was not
/// recorded (it then judged lexically, as with any unknown answer).
pub struct Replaying<'a> {
    pub facts: &'a Facts,
    pub missed: std::sync::atomic::AtomicBool,
}

impl Replaying<'_> {
    fn note<T>(&self, answer: Option<&Option<T>>) -> Option<T>
    where
        T: Clone,
    {
        if answer.is_none() {
            self.missed.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        answer.cloned().flatten()
    }
}

impl Host for Replaying<'_> {
    fn resolve_path(&self, path: &Path) -> Option<PathBuf> {
        self.note(self.facts.paths.get(path))
    }
    fn tree_stats(&self, path: &Path, stop_after: u64) -> Option<TreeStats> {
        self.note(self.facts.trees.get(&(path.to_path_buf(), stop_after)))
    }
    fn resolve_host(&self, host: &str, port: u16) -> Option<Vec<IpAddr>> {
        self.note(self.facts.hosts.get(&(host.to_string(), port)))
    }
}

/// Recent answers to "where does this path really lead" (symlinks resolved), shared by
/// requests for a second. Handing a call to the blocking pool costs more than the lookup
/// itself (measured: ~80 µs of CPU per call), and agents ask about the same paths again and
/// again. The window adds nothing to what a guard can promise: a symlink may change at
/// any moment after the check, before the executor runs, cache or not.
#[derive(Default)]
pub struct PathCache {
    entries: Mutex<HashMap<PathBuf, (i64, Option<PathBuf>)>>,
}

const PATH_TTL_MS: i64 = 1_000;
const PATH_CACHE_MAX: usize = 16_384;

impl PathCache {
    fn get(&self, path: &Path, now_ms: i64) -> Option<Option<PathBuf>> {
        let g = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        g.get(path)
            .filter(|(at, _)| now_ms - at < PATH_TTL_MS)
            .map(|(_, r)| r.clone())
    }

    fn put(&self, facts: &Facts, now_ms: i64) {
        let mut g = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if g.len() + facts.paths.len() > PATH_CACHE_MAX {
            g.retain(|_, (at, _)| now_ms - *at < PATH_TTL_MS);
            if g.len() + facts.paths.len() > PATH_CACHE_MAX {
                g.clear();
            }
        }
        for (p, r) in &facts.paths {
            g.insert(p.clone(), (now_ms, r.clone()));
        }
    }
}

/// Answers from the cache only, noting whether anything had to be left unanswered.
struct FromCache<'a> {
    cache: &'a PathCache,
    now_ms: i64,
    facts: Mutex<Facts>,
    missed: std::sync::atomic::AtomicBool,
}

impl FromCache<'_> {
    fn miss(&self) {
        self.missed.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Host for FromCache<'_> {
    fn resolve_path(&self, path: &Path) -> Option<PathBuf> {
        match self.cache.get(path, self.now_ms) {
            Some(r) => {
                let mut f = self.facts.lock().unwrap_or_else(|p| p.into_inner());
                f.paths.insert(path.to_path_buf(), r.clone());
                r
            }
            None => {
                self.miss();
                None
            }
        }
    }
    fn tree_stats(&self, _: &Path, _: u64) -> Option<TreeStats> {
        self.miss();
        None
    }
    fn resolve_host(&self, _: &str, _: u16) -> Option<Vec<IpAddr>> {
        self.miss();
        None
    }
}

fn evaluate(policy: &Policy, p: &Proposal, agent: &str, host: &dyn Host) {
    evaluate_call(policy, &p.call(agent), host)
}

/// Ask `host` what deciding `call` asks of it. Only layers 1-3 do (budgets and approval
/// never), and only for tools with path or URL guards: the rest need no facts.
fn evaluate_call(policy: &Policy, call: &Call, host: &dyn Host) {
    if policy.asks_host(call) {
        let _ = policy.check_arguments(call, host);
    }
}

/// The facts a call needs when the cache holds them all (or it needs none), without any
/// I/O; `None` when something must be asked of this machine (see [`gather`]).
pub fn cached(cache: &PathCache, policy: &Policy, p: &Proposal, agent: &str, now_ms: i64) -> Option<Facts> {
    let host = FromCache {
        cache,
        now_ms,
        facts: Mutex::default(),
        missed: Default::default(),
    };
    evaluate(policy, p, agent, &host);
    (!host.missed.into_inner()).then(|| host.facts.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// Ask this machine what the call's guards want to know, and remember the path answers.
/// Blocking: run it on the blocking pool.
pub fn gather(cache: &PathCache, policy: &Policy, p: &Proposal, agent: &str, now_ms: i64) -> Facts {
    let recorder = Recorder::default();
    evaluate(policy, p, agent, &recorder);
    let facts = recorder.into_facts();
    cache.put(&facts, now_ms);
    facts
}

/// [`gather`] for a call that is not a fresh proposal (a reviewer's modification).
pub fn gather_call(policy: &Policy, call: &Call) -> Facts {
    let recorder = Recorder::default();
    evaluate_call(policy, call, &recorder);
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
    fn only_calls_whose_guards_ask_the_host_about_something_new_go_to_the_blocking_pool() {
        let p = demo();
        let cache = PathCache::default();
        let read = proposal("read_file", json!({"path": "a.txt"}));
        // Path guards ask for symlinks: the first time, this machine must be asked.
        assert!(cached(&cache, &p, &read, "a", 0).is_none());
        let facts = gather(&cache, &p, &read, "a", 0);
        assert!(!facts.paths.is_empty());
        // Within the second the answer is reused; after it, asked again.
        let again = cached(&cache, &p, &read, "a", 500).expect("answered from the cache");
        assert_eq!(again.paths, facts.paths);
        assert!(cached(&cache, &p, &read, "a", 1_000).is_none());
        // No guard that looks at the host, or refused before any guard: nothing to ask.
        for call in [
            proposal("web_search", json!({"query": "q"})),
            proposal("execute_command", json!({"command": "ls"})),
            proposal("read_file", json!({"path": 5})),
        ] {
            assert_eq!(cached(&cache, &p, &call, "a", 0).map(|f| f.paths.len()), Some(0));
        }
    }

    #[test]
    fn stored_facts_name_a_path_once_when_it_resolves_to_itself_and_read_back_the_same() {
        let mut f = Facts::default();
        f.paths.insert("/w".into(), Some("/w".into()));
        f.paths.insert("/w/link".into(), Some("/w/target".into()));
        f.paths.insert("/w/missing".into(), None);
        let text = f.to_json().unwrap();
        assert_eq!(text, r#"{"paths":["/w",["/w/link","/w/target"],["/w/missing",null]]}"#);
        assert_eq!(Facts::from_json(&text), f);
        // Facts stored before (every path as a pair) read the same.
        let old = r#"{"paths":[["/w","/w"],["/w/link","/w/target"],["/w/missing",null]]}"#;
        assert_eq!(Facts::from_json(old), f);
    }
}
