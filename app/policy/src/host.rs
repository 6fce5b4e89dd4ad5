//! What the engine may ask of the machine it runs on.
//!
//! The engine itself does no I/O. A few guards are only sound with facts from the
//! host (a symlink inside a fence pointing outside it; how many files a trash request
//! would move; what a host name resolves to), so the caller passes a [`Host`]:
//! [`PureHost`] answers "unknown" to everything (lexical checks only, what tests and
//! benchmarks of the pure core use), [`LocalHost`] reads this machine's filesystem and
//! resolver. `LocalHost` is the only code in this crate that touches the outside world.

use std::net::{IpAddr, ToSocketAddrs};
use std::path::{Component, Path, PathBuf};

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

/// This machine's filesystem and resolver.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalHost;

impl Host for LocalHost {
    fn resolve_path(&self, path: &Path) -> Option<PathBuf> {
        let mut existing = path.to_path_buf();
        let mut rest: Vec<std::ffi::OsString> = Vec::new();
        loop {
            if let Ok(real) = std::fs::canonicalize(&existing) {
                let mut out = real;
                for part in rest.iter().rev() {
                    out.push(part);
                }
                // The tail does not exist, so it holds no symlinks: fold it lexically.
                let out = crate::guards::path::normalize(&out);
                // Nothing of the path exists but the filesystem root: the host knows nothing.
                return (existing.parent().is_some()).then_some(out);
            }
            match existing.components().next_back() {
                Some(Component::Normal(n)) => rest.push(n.to_os_string()),
                Some(Component::ParentDir) => rest.push("..".into()),
                _ => return None,
            }
            existing.pop();
        }
    }

    fn tree_stats(&self, path: &Path, stop_after: u64) -> Option<TreeStats> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        let mut stats = TreeStats {
            files: 0,
            bytes: 0,
            complete: true,
        };
        let mut stack = vec![(path.to_path_buf(), meta)];
        while let Some((p, m)) = stack.pop() {
            if m.is_dir() {
                let Ok(entries) = std::fs::read_dir(&p) else {
                    stats.complete = false;
                    continue;
                };
                for e in entries.flatten() {
                    if let Ok(m) = e.metadata() {
                        stack.push((e.path(), m));
                    }
                }
            } else {
                stats.files += 1;
                stats.bytes += m.len();
                if stats.files > stop_after {
                    stats.complete = false;
                    break;
                }
            }
        }
        Some(stats)
    }

    fn resolve_host(&self, host: &str, port: u16) -> Option<Vec<IpAddr>> {
        let addrs: Vec<IpAddr> = (host, port).to_socket_addrs().ok()?.map(|a| a.ip()).collect();
        (!addrs.is_empty()).then_some(addrs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_host_resolves_existing_prefix_and_appends_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let p = dir.path().join("missing/child.txt");
        assert_eq!(LocalHost.resolve_path(&p).unwrap(), real.join("missing/child.txt"));
    }

    #[test]
    fn local_host_follows_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::create_dir(&target).unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("link")).unwrap();
        let got = LocalHost.resolve_path(&dir.path().join("link/x")).unwrap();
        assert_eq!(got, std::fs::canonicalize(&target).unwrap().join("x"));
    }

    #[test]
    fn tree_stats_counts_files_and_bytes_and_stops_early() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("a"), b"12345").unwrap();
        std::fs::write(dir.path().join("sub/b"), b"123").unwrap();
        let s = LocalHost.tree_stats(dir.path(), 100).unwrap();
        assert_eq!((s.files, s.bytes, s.complete), (2, 8, true));
        let s = LocalHost.tree_stats(dir.path(), 1).unwrap();
        assert!(!s.complete);
        assert!(LocalHost.tree_stats(&dir.path().join("nope"), 1).is_none());
    }

    #[test]
    fn pure_host_knows_nothing() {
        assert!(PureHost.resolve_path(Path::new("/etc")).is_none());
        assert!(PureHost.resolve_host("localhost", 80).is_none());
    }
}
