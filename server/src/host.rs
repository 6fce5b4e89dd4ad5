//! The machine Airlock runs on, as the policy engine's guards may ask about it: symlinks
//! resolved on this filesystem, file counts below a path, and what a host name resolves
//! to. The policy crate itself does no I/O; this is the server's answer to its [`Host`].

use policy::{Host, TreeStats};
use std::net::{IpAddr, ToSocketAddrs};
use std::path::{Component, Path, PathBuf};

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
                let out = policy::guards::path::normalize(&out);
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
    use policy::config::FenceConfig;
    use policy::guards::path::Fence;
    use policy::{Inputs, Layer, Policy, Status};
    use serde_json::json;

    fn fence(roots: &[&str], base: Option<&str>) -> Fence {
        Fence::new(
            "t",
            &FenceConfig {
                roots: roots.iter().map(|s| s.to_string()).collect(),
                relative_base: base.map(str::to_string),
                allow_root: false,
                ascii_only: false,
                allow_wildcards: false,
                resolve_symlinks: true,
            },
        )
        .unwrap()
    }

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
    fn symlinks_that_leave_the_fence_are_caught_on_this_host() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("escape")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret"), root.join("sub/file-link")).unwrap();
        std::os::unix::fs::symlink(&root, root.join("self")).unwrap();
        std::os::unix::fs::symlink("..", root.join("sub/up")).unwrap();
        let r = root.to_str().unwrap();
        let f = fence(&[r], Some(r));

        for raw in [
            "escape/secret",
            "escape",
            "sub/file-link",
            "escape/new-file",
            "sub/up/../outside/secret",
        ] {
            let e = f.check(raw, &LocalHost).unwrap_err();
            assert!(e.contains("outside") || e.contains("symlink"), "{raw}: {e}");
        }
        // A link back to the root is the root itself.
        assert!(f.check("self", &LocalHost).unwrap_err().contains("root of fence"));
        // Lexically the same paths pass when the host is not consulted.
        assert!(f.check("escape/secret", &policy::PureHost).is_ok());
        // Ordinary files and not-yet-existing files inside are fine.
        std::fs::write(root.join("sub/ok.txt"), "x").unwrap();
        assert!(f.check("sub/ok.txt", &LocalHost).is_ok());
        assert!(f.check("sub/new/deeper.txt", &LocalHost).is_ok());
    }

    #[test]
    fn a_symlinked_root_is_compared_by_its_real_location() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(real.join("a"), "x").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let l = link.to_str().unwrap();
        let f = fence(&[l], None);
        assert!(f.check(&format!("{l}/a"), &LocalHost).is_ok());
    }

    const DEMO: &str = include_str!("../../policies/demo.toml");
    const T0: i64 = 1_767_225_600_000;

    fn call<'a>(tool: &'a str, args: &'a serde_json::Value) -> policy::Call<'a> {
        policy::Call {
            agent: "a1",
            tool,
            server: None,
            session_id: "s1",
            turn_id: None,
            arguments: args,
            context: &serde_json::Value::Null,
        }
    }

    /// The demo policy with the trash root moved to a real temporary directory, so the
    /// engine can count files through [`LocalHost`].
    fn demo_with_trash_root(root: &std::path::Path) -> Policy {
        let src = DEMO.replace("/data/shared/uploads", root.to_str().unwrap());
        Policy::from_toml(&src).unwrap()
    }

    #[test]
    fn move_to_trash_on_this_host_reports_count_and_size_and_denies_over_200_files() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let p = demo_with_trash_root(&root);
        let small = root.join("small");
        std::fs::create_dir(&small).unwrap();
        for i in 0..3 {
            std::fs::write(small.join(format!("f{i}")), vec![b'x'; 100]).unwrap();
        }
        let big = root.join("big");
        std::fs::create_dir(&big).unwrap();
        for i in 0..201 {
            std::fs::write(big.join(format!("f{i}")), b"y").unwrap();
        }
        let inputs = Inputs {
            now_ms: T0,
            usage: &policy::NoUsage,
            grants: &[],
            host: &LocalHost,
        };

        let args = json!({ "paths": [small.to_str().unwrap()] });
        let d = p.evaluate(&call("move_to_trash", &args), &inputs);
        assert_eq!(d.status, Status::Pending, "{}", d.reason);
        let stats = d.impact.unwrap().stats.expect("local root gives stats");
        assert_eq!((stats.files, stats.bytes), (3, 300));

        let args = json!({ "paths": [big.to_str().unwrap()] });
        let d = p.evaluate(&call("move_to_trash", &args), &inputs);
        assert_eq!(
            (d.status, d.blocked_by),
            (Status::Denied, Some(Layer::PathGuard)),
            "{}",
            d.reason
        );
        assert!(d.reason.contains("200"), "{}", d.reason);

        // Two paths that together pass 200 files are denied too.
        let args = json!({ "paths": [small.to_str().unwrap(), big.join("f0").to_str().unwrap(), big.join("f1").to_str().unwrap()] });
        assert_eq!(
            p.evaluate(&call("move_to_trash", &args), &inputs).status,
            Status::Pending
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlink_escaping_the_trash_root_is_denied() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap().join("uploads");
        std::fs::create_dir(&root).unwrap();
        let outside = tmp.path().canonicalize().unwrap().join("secrets");
        std::fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        let p = demo_with_trash_root(&root);
        let inputs = Inputs {
            now_ms: T0,
            usage: &policy::NoUsage,
            grants: &[],
            host: &LocalHost,
        };
        let args = json!({ "paths": [root.join("link").join("key").to_str().unwrap()] });
        let d = p.evaluate(&call("move_to_trash", &args), &inputs);
        assert_eq!(
            (d.status, d.blocked_by),
            (Status::Denied, Some(Layer::PathGuard)),
            "{}",
            d.reason
        );
    }
}
