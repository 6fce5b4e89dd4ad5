//! Path fence: is a path inside one of the allowed roots?
//!
//! Order: refuse what a path must never contain (NUL and control characters,
//! wildcards, backslashes, `~`, non-ASCII where configured) → make it absolute
//! (relative paths only when the fence has a base) → fold `.` and `..` lexically →
//! component-wise containment (`/uploads_evil` is not inside `/uploads`) → the root
//! itself only where allowed → when the host can see the path, resolve symlinks and
//! check containment again against the resolved root.

use crate::config::FenceConfig;
use crate::host::Host;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Fence {
    pub name: String,
    roots: Vec<PathBuf>,
    relative_base: Option<PathBuf>,
    allow_root: bool,
    ascii_only: bool,
    allow_wildcards: bool,
    resolve_symlinks: bool,
}

/// Longest path accepted (Linux PATH_MAX).
pub const MAX_PATH: usize = 4096;

impl Fence {
    pub fn new(name: &str, c: &FenceConfig) -> Result<Fence, String> {
        if c.roots.is_empty() {
            return Err("a fence needs at least one root".into());
        }
        let mut roots = Vec::new();
        for r in &c.roots {
            let p = Path::new(r);
            if !p.is_absolute() {
                return Err(format!("root {r:?} is not an absolute path"));
            }
            roots.push(normalize(p));
        }
        let relative_base = match &c.relative_base {
            None => None,
            Some(b) => {
                let p = normalize(Path::new(b));
                if !Path::new(b).is_absolute() {
                    return Err(format!("relative_base {b:?} is not an absolute path"));
                }
                if !roots.iter().any(|r| p.starts_with(r)) {
                    return Err(format!("relative_base {b:?} is not inside any root"));
                }
                Some(p)
            }
        };
        Ok(Fence {
            name: name.to_string(),
            roots,
            relative_base,
            allow_root: c.allow_root,
            ascii_only: c.ascii_only,
            allow_wildcards: c.allow_wildcards,
            resolve_symlinks: c.resolve_symlinks,
        })
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Check one path. On success returns the normalised absolute path that is inside.
    pub fn check(&self, raw: &str, host: &dyn Host) -> Result<PathBuf, String> {
        if raw.is_empty() {
            return Err("empty path".into());
        }
        if raw.len() > MAX_PATH {
            return Err(format!("path longer than {MAX_PATH} bytes"));
        }
        for c in raw.chars() {
            if c == '\0' {
                return Err("path contains a NUL byte".into());
            }
            if c.is_control() {
                return Err(format!("path contains control character U+{:04X}", c as u32));
            }
            if self.ascii_only && !c.is_ascii() {
                return Err(format!(
                    "path contains non-ASCII character U+{:04X}; this fence accepts ASCII only",
                    c as u32
                ));
            }
            if !self.allow_wildcards && matches!(c, '*' | '?' | '[') {
                return Err(format!("path contains wildcard {c:?}; name files exactly"));
            }
            if c == '\\' {
                return Err("path contains a backslash".into());
            }
        }
        if raw.starts_with('~') {
            return Err("home-relative path (~); give an absolute path".into());
        }
        let p = Path::new(raw);
        let joined = if p.is_absolute() {
            p.to_path_buf()
        } else if let Some(base) = &self.relative_base {
            base.join(p)
        } else {
            return Err(format!(
                "relative path {raw:?}; fence {} needs absolute paths",
                self.name
            ));
        };
        let abs = normalize(&joined);
        let root = self.containing_root(&abs).ok_or_else(|| {
            format!(
                "{} is outside fence {} ({})",
                abs.display(),
                self.name,
                self.roots_text()
            )
        })?;
        if !self.allow_root && abs == *root {
            return Err(format!("{} is the root of fence {} itself", abs.display(), self.name));
        }
        if self.resolve_symlinks {
            // The unfolded path goes to the host: `link/..` means the link target's parent.
            self.check_resolved(&joined, root, host)?;
        }
        Ok(abs)
    }

    fn check_resolved(&self, abs: &Path, root: &Path, host: &dyn Host) -> Result<(), String> {
        // Only meaningful when the root exists on this host; otherwise the lexical answer stands.
        let Some(real_root) = host.resolve_path(root) else {
            return Ok(());
        };
        let Some(real) = host.resolve_path(abs) else {
            return Ok(());
        };
        if !real.starts_with(&real_root) {
            return Err(format!(
                "{} resolves through a symlink to {}, outside fence {}",
                abs.display(),
                real.display(),
                self.name
            ));
        }
        if !self.allow_root && real == real_root {
            return Err(format!(
                "{} resolves to the root of fence {} itself",
                abs.display(),
                self.name
            ));
        }
        Ok(())
    }

    fn containing_root(&self, abs: &Path) -> Option<&PathBuf> {
        self.roots.iter().find(|r| abs.starts_with(r))
    }

    fn roots_text(&self) -> String {
        let v: Vec<String> = self.roots.iter().map(|r| r.display().to_string()).collect();
        format!("roots: {}", v.join(", "))
    }
}

/// Fold `.` and `..` without touching the filesystem. `..` at the root stays at the
/// root, as the kernel does. The result of an absolute input is absolute.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Prefix(_) => {}
            Component::RootDir => out.push("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                if out.as_os_str() != "/" {
                    out.pop();
                }
            }
            Component::Normal(n) => out.push(n),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(if p.is_absolute() { "/" } else { "." });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::PureHost;

    fn fence(roots: &[&str], base: Option<&str>, allow_root: bool, ascii_only: bool) -> Fence {
        Fence::new(
            "t",
            &FenceConfig {
                roots: roots.iter().map(|s| s.to_string()).collect(),
                relative_base: base.map(str::to_string),
                allow_root,
                ascii_only,
                allow_wildcards: false,
                resolve_symlinks: true,
            },
        )
        .unwrap()
    }

    fn uploads() -> Fence {
        fence(&["/data/shared/uploads"], None, false, true)
    }

    #[test]
    fn paths_inside_the_root_pass_and_come_back_normalised() {
        let f = uploads();
        for (raw, want) in [
            ("/data/shared/uploads/a.csv", "/data/shared/uploads/a.csv"),
            (
                "/data/shared/uploads/2024/05/export.csv",
                "/data/shared/uploads/2024/05/export.csv",
            ),
            ("/data/shared/uploads/./x/../y.txt", "/data/shared/uploads/y.txt"),
            ("/data//shared/uploads//z", "/data/shared/uploads/z"),
            ("/data/shared/uploads/dir/", "/data/shared/uploads/dir"),
            (
                "/data/shared/uploads/with space.txt",
                "/data/shared/uploads/with space.txt",
            ),
            ("/data/shared/uploads/..hidden", "/data/shared/uploads/..hidden"),
            (
                "/data/shared/uploads/%2e%2e/literal",
                "/data/shared/uploads/%2e%2e/literal",
            ),
        ] {
            assert_eq!(f.check(raw, &PureHost).unwrap(), PathBuf::from(want), "{raw}");
        }
    }

    #[test]
    fn traversal_and_lookalike_roots_are_denied() {
        let f = uploads();
        for raw in [
            "/data/shared/uploads/../secrets.txt",
            "/data/shared/uploads/../../../etc/passwd",
            "/data/shared/uploads/a/../../uploads_evil/x",
            "/data/shared/uploads_evil/x",
            "/data/shared/uploadsx",
            "/data/shared",
            "/",
            "/etc/passwd",
            "/../data/shared/uploads/../x",
            "//data/shared/uploads/../../x",
            "/data/shared/./uploads/./../x",
        ] {
            let e = f.check(raw, &PureHost).unwrap_err();
            assert!(e.contains("outside fence"), "{raw}: {e}");
        }
    }

    #[test]
    fn the_root_itself_is_refused_when_configured() {
        let f = uploads();
        for raw in [
            "/data/shared/uploads",
            "/data/shared/uploads/",
            "/data/shared/uploads/.",
            "/data/shared/uploads/x/..",
        ] {
            let e = f.check(raw, &PureHost).unwrap_err();
            assert!(e.contains("root of fence"), "{raw}: {e}");
        }
        let ws = fence(&["/ws"], Some("/ws"), true, false);
        assert!(ws.check("/ws", &PureHost).is_ok());
    }

    #[test]
    fn forbidden_characters_are_refused_before_anything_else() {
        let f = uploads();
        for (raw, needle) in [
            ("/data/shared/uploads/a\0b", "NUL"),
            ("/data/shared/uploads/a\nb", "control"),
            ("/data/shared/uploads/\u{1b}[2J", "control"),
            ("/data/shared/uploads/*.csv", "wildcard"),
            ("/data/shared/uploads/file?.csv", "wildcard"),
            ("/data/shared/uploads/[ab].csv", "wildcard"),
            ("/data/shared/uploads/résumé.pdf", "non-ASCII"),
            ("/data/shared/uploads/\u{202E}fdp.exe", "non-ASCII"),
            ("/data/shared/uploads\\..\\x", "backslash"),
            ("~/uploads/x", "home-relative"),
            ("", "empty"),
        ] {
            let e = f.check(raw, &PureHost).unwrap_err();
            assert!(e.contains(needle), "{raw:?}: {e}");
        }
        assert!(f
            .check(&format!("/data/shared/uploads/{}", "a".repeat(5000)), &PureHost)
            .is_err());
    }

    #[test]
    fn relative_paths_use_the_base_or_are_refused() {
        let ws = fence(&["/srv/ws"], Some("/srv/ws"), true, false);
        assert_eq!(
            ws.check("notes/a.md", &PureHost).unwrap(),
            PathBuf::from("/srv/ws/notes/a.md")
        );
        assert_eq!(ws.check(".", &PureHost).unwrap(), PathBuf::from("/srv/ws"));
        assert!(ws.check("../other/x", &PureHost).unwrap_err().contains("outside"));
        assert!(ws.check("a/../../x", &PureHost).is_err());
        assert!(uploads()
            .check("a.csv", &PureHost)
            .unwrap_err()
            .contains("relative path"));
        // Non-ASCII is fine where the fence does not forbid it.
        assert!(ws.check("résumé.pdf", &PureHost).is_ok());
    }

    #[test]
    fn fence_configuration_is_validated() {
        let bad = |roots: Vec<&str>, base: Option<&str>| {
            Fence::new(
                "x",
                &FenceConfig {
                    roots: roots.into_iter().map(String::from).collect(),
                    relative_base: base.map(String::from),
                    allow_root: true,
                    ascii_only: false,
                    allow_wildcards: false,
                    resolve_symlinks: true,
                },
            )
            .unwrap_err()
        };
        assert!(bad(vec![], None).contains("at least one root"));
        assert!(bad(vec!["rel"], None).contains("not an absolute"));
        assert!(bad(vec!["/a"], Some("/b")).contains("not inside"));
    }
}
