//! What the engine may ask of the machine it runs on.
//!
//! This crate does no I/O. A few guards are only sound with facts from the host (a
//! symlink inside a fence pointing outside it; how many files a trash request would move;
//! what a host name resolves to), so the caller passes a [`Host`]: [`PureHost`] answers
//! "unknown" to everything (lexical checks only, what tests and benchmarks of the pure
//! core use); the server's `host::LocalHost` reads the machine's filesystem and resolver.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// Files and bytes below some paths; `complete` is false when the walk stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TreeStats {
    pub files: u64,
    pub bytes: u64,
    pub complete: bool,
}

pub trait Host: Send + Sync {
    /// Resolve symlinks in `path`: the longest existing ancestor is canonicalised and the
    /// rest appended. `None` when this host cannot say (nothing of the path exists here,
    /// or the host does not look at files).
    fn resolve_path(&self, path: &Path) -> Option<PathBuf>;
    /// Count regular files (recursively, not following symlinks) below `path`, stopping
    /// once more than `stop_after` are seen. `None` when the path is not on this host.
    fn tree_stats(&self, path: &Path, stop_after: u64) -> Option<TreeStats>;
    /// Addresses `host` resolves to. `None` when it cannot be resolved here.
    fn resolve_host(&self, host: &str, port: u16) -> Option<Vec<IpAddr>>;
}

/// A host that knows nothing: every guard falls back to its lexical checks.
#[derive(Debug, Default, Clone, Copy)]
pub struct PureHost;

impl Host for PureHost {
    fn resolve_path(&self, _: &Path) -> Option<PathBuf> {
        None
    }
    fn tree_stats(&self, _: &Path, _: u64) -> Option<TreeStats> {
        None
    }
    fn resolve_host(&self, _: &str, _: u16) -> Option<Vec<IpAddr>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pure_host_knows_nothing() {
        assert!(PureHost.resolve_path(Path::new("/etc")).is_none());
        assert!(PureHost.tree_stats(Path::new("/etc"), 1).is_none());
        assert!(PureHost.resolve_host("localhost", 80).is_none());
    }
}
