//! Helpers on words and paths: normalising, globbing, brace expansion, option parsing,
//! and reading `sed`/`awk` programs and ANSI-C strings.

use super::*;

pub(super) fn is_code_env(name: &str) -> bool {
    let u = name.to_ascii_uppercase();
    CODE_ENV.contains(&u.as_str())
        || CODE_ENV_PREFIXES.iter().any(|p| u.starts_with(p))
        || u.ends_with("_COMMAND")
        || u.ends_with("_CMD")
}

pub(super) fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f == '_' || f.is_ascii_alphabetic())
        && c.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Identifiers in an arithmetic expression (any of them may be assigned).
pub(super) fn identifiers(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = None;
    let b = expr.as_bytes();
    for i in 0..=b.len() {
        let word = i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric());
        match (word, start) {
            (true, None) => start = Some(i),
            (false, Some(st)) => {
                let w = &expr[st..i];
                // `16#ff`: digits in a base, not a name
                if is_identifier(w) && !(st > 0 && b[st - 1] == b'#') {
                    out.push(w.to_string());
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

pub(super) fn is_integer(s: &str) -> bool {
    let t = s.strip_prefix('-').unwrap_or(s);
    !t.is_empty() && t.chars().all(|c| c.is_ascii_digit())
}

/// Lexical normalisation of a path that is absolute (`/…`), home-relative (`~…`) or
/// relative to an unknown directory.
pub(super) fn place_of(path: &str) -> Place {
    let (root, rest) = if let Some(r) = path.strip_prefix('/') {
        ("/", r)
    } else if path == "~" || path.starts_with("~/") {
        ("~", &path[1..])
    } else {
        ("", path)
    };
    let mut out: Vec<&str> = Vec::new();
    for c in rest.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if out.pop().is_none() && root != "/" {
                    // Above home or above the unknown starting directory.
                    return Place::Escapes;
                }
            }
            c => out.push(c),
        }
    }
    match root {
        "/" => Place::Abs(format!("/{}", out.join("/"))),
        "~" if out.is_empty() => Place::Abs("~".into()),
        "~" => Place::Abs(format!("~/{}", out.join("/"))),
        _ => Place::Inside(out.join("/")),
    }
}

/// `*`, `?`, a `[…]` bracket expression (a lone `[` is the test command) or an extended
/// glob (`@(…)`, `+(…)`, `!(…)`).
pub(super) fn has_glob(s: &str) -> bool {
    s.contains(['*', '?'])
        || s.find('[').is_some_and(|i| s[i + 1..].contains(']'))
        || s.contains("@(")
        || s.contains("+(")
        || s.contains("!(")
}

/// Home-relative components that run code or grant access when written.
pub(super) fn home_sensitive(rest: &[&str]) -> bool {
    match rest {
        [] => false,
        [".ssh", ..] | [".gnupg", ..] => true,
        [f] => RC_FILES.contains(f) || has_glob(f),
        [".config", d, ..] => matches!(*d, "autostart" | "systemd" | "fish" | "git" | "environment.d"),
        ["Library", d, ..] => matches!(*d, "LaunchAgents" | "LaunchDaemons"),
        _ => false,
    }
}

/// A system location whose modification breaks the machine or escalates privileges.
/// `n` is a normalised absolute or home-relative path.
pub(super) fn protected(n: &str) -> bool {
    if n == "/" {
        return true;
    }
    if let Some(rest) = n.strip_prefix('~') {
        let comps: Vec<&str> = rest.split('/').filter(|c| !c.is_empty()).collect();
        return home_sensitive(&comps);
    }
    let comps: Vec<&str> = n.trim_start_matches('/').split('/').collect();
    let first = comps[0];
    if has_glob(first) {
        return true; // `/e?c/…` may be `/etc/…`
    }
    match first {
        "etc" | "bin" | "sbin" | "usr" | "boot" | "root" | "sys" | "System" | "Library" | "private" => true,
        l if l.starts_with("lib") => true, // /lib, /lib32, /lib64, /libx32, /libexec
        "dev" => is_raw_device(n),
        "proc" => !n.starts_with("/proc/self/fd/"),
        "var" => matches!(comps.get(1), Some(&("lib" | "spool" | "log" | "db" | "root" | "mail"))),
        "home" | "Users" => comps.len() >= 3 && home_sensitive(&comps[2..]),
        _ => false,
    }
}
/// GNU tools installed with a prefix (`grm`, `gcp` on macOS; `uu-rm` from uutils) are
/// the same tools.
pub(super) fn canonical_name(n: String) -> String {
    const TOOLS: &[&str] = &[
        "rm", "cp", "mv", "ln", "dd", "tee", "touch", "truncate", "install", "chmod", "chown", "chgrp", "shred",
        "timeout", "env", "nice", "stdbuf", "nohup", "mkdir", "xargs", "find", "sed", "tar", "awk", "sort", "split",
        "rmdir", "unlink", "chroot", "kill", "du", "ls", "setsid", "time",
    ];
    for p in ["g", "uu-", "uu_", "gnu"] {
        if let Some(r) = n.strip_prefix(p) {
            if TOOLS.contains(&r) {
                return r.to_string();
            }
        }
    }
    n
}

pub(super) fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

/// Lexically normalise a path word for comparison (`//etc/./` → `/etc`). `~` stays `~`.
pub(super) fn norm_path(p: &str) -> String {
    if p.starts_with('/') {
        crate::guards::path::normalize(std::path::Path::new(p))
            .to_string_lossy()
            .into_owned()
    } else {
        let t = p.trim_end_matches('/');
        if t.is_empty() {
            p.to_string()
        } else {
            t.to_string()
        }
    }
}

/// Is `t` the root, home, a top-level system directory, or a glob over one of those?
pub(super) fn system_target(t: &Expanded) -> Option<String> {
    let raw = t.text.as_str();
    let n = norm_path(raw);
    if n == "~" || n == "~/*" || raw == "~/" {
        return Some("the home directory".into());
    }
    if !n.starts_with('/') {
        return None;
    }
    if n == "/" {
        return Some("/".into());
    }
    let first = n.trim_start_matches('/').split('/').next().unwrap_or("");
    let depth = n.trim_start_matches('/').split('/').count();
    // A glob in the first component (`/*`, `/e?c`, `/[a-z]*`) can match any system directory.
    if t.glob && first.contains(['*', '?', '[']) {
        return Some(format!("{raw} (matches top-level directories)"));
    }
    let no_glob_tail = n.strip_suffix("/*").unwrap_or(&n);
    let first_nt = no_glob_tail.trim_start_matches('/');
    if SYSTEM_DIRS.contains(&first_nt) || (depth == 1 && SYSTEM_DIRS.contains(&first)) {
        return Some(raw.to_string());
    }
    if SYSTEM_SUBDIRS.contains(&no_glob_tail) {
        return Some(raw.to_string());
    }
    None
}

pub(super) fn is_raw_device(t: &str) -> bool {
    let n = norm_path(t);
    n.starts_with("/dev/")
        && !HARMLESS_DEV.contains(&n.as_str())
        && !n.starts_with("/dev/fd/")
        && !n.starts_with("/dev/pts/")
        && !n.starts_with("/dev/shm/")
        && !n.starts_with("/dev/tcp/")
        && !n.starts_with("/dev/udp/")
}

pub(super) fn is_net_device(t: &str) -> bool {
    let n = norm_path(t);
    n.starts_with("/dev/tcp/") || n.starts_with("/dev/udp/")
}

/// Recursive deletion, moving away or opening up `n` (a resolved path) breaks the machine.
pub(super) fn deletion_target(n: &str, glob: bool) -> Option<String> {
    let e = Expanded {
        text: n.to_string(),
        glob,
        ..Expanded::default()
    };
    let comps: Vec<&str> = n.trim_start_matches('/').split('/').collect();
    // A user's home directory (`/home/bob`, `/Users/bob`) or a glob over them.
    let home = n.starts_with('/') && comps.len() == 2 && matches!(comps[0], "home" | "Users");
    system_target(&e)
        .or_else(|| protected(n).then(|| n.to_string()))
        .or_else(|| home.then(|| format!("{n} (a home directory)")))
}

/// Expand `{a,b}` and `{1..3}` (bash order: outer braces first). `None`: too many words.
pub(super) fn brace_expand(s: &str) -> Option<Vec<String>> {
    let b: Vec<char> = s.chars().collect();
    // Find the first `{` that has a matching `}` with a top-level `,` or `..` inside.
    for open in 0..b.len() {
        if b[open] != '{' || (open > 0 && b[open - 1] == '$') {
            continue;
        }
        let mut depth = 0;
        let mut commas = Vec::new();
        let mut close = None;
        for (j, &c) in b.iter().enumerate().skip(open) {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(j);
                        break;
                    }
                }
                ',' if depth == 1 => commas.push(j),
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        let pre: String = b[..open].iter().collect();
        let post: String = b[close + 1..].iter().collect();
        let inner: String = b[open + 1..close].iter().collect();
        let alts: Vec<String> = if !commas.is_empty() {
            let mut v = Vec::new();
            let mut start = open + 1;
            for &c in commas.iter().chain(std::iter::once(&close)) {
                v.push(b[start..c].iter().collect());
                start = c + 1;
            }
            v
        } else if let Some((x, y)) = inner.split_once("..") {
            let y = y.split("..").next().unwrap_or(y);
            if let (Ok(x), Ok(y)) = (x.parse::<i64>(), y.parse::<i64>()) {
                if (x - y).unsigned_abs() as usize >= MAX_BRACE {
                    return None;
                }
                let (lo, hi) = (x.min(y), x.max(y));
                (lo..=hi).map(|i| i.to_string()).collect()
            } else if let (Some(x), Some(y)) = (single_char(x), single_char(y)) {
                let (lo, hi) = (x.min(y), x.max(y));
                (lo..=hi).map(|c| c.to_string()).collect()
            } else {
                continue;
            }
        } else {
            continue;
        };
        let mut out = Vec::new();
        for a in alts {
            for w in brace_expand(&format!("{pre}{a}{post}"))? {
                out.push(w);
                if out.len() > MAX_BRACE {
                    return None;
                }
            }
        }
        return Some(out);
    }
    Some(vec![s.to_string()])
}

pub(super) fn single_char(s: &str) -> Option<char> {
    let mut c = s.chars();
    match (c.next(), c.next()) {
        (Some(x), None) if x.is_ascii_alphanumeric() => Some(x),
        _ => None,
    }
}

/// Does a numeric or symbolic `chmod`-style mode grant world write / setuid-setgid?
/// `None`: not a mode the guard can read.
pub(super) fn mode_bits(m: &str) -> Option<(bool, bool)> {
    if m.is_empty() {
        return None;
    }
    if m.chars().all(|c| c.is_digit(8)) {
        let v = u32::from_str_radix(m, 8).ok()?;
        return Some((v & 0o002 != 0, v & 0o6000 != 0));
    }
    let mut ww = false;
    let mut sid = false;
    for clause in m.split(',') {
        let who: String = clause.chars().take_while(|c| "ugoa".contains(*c)).collect();
        let ops = &clause[who.len()..];
        if ops.is_empty() || !ops.starts_with(['+', '-', '=']) {
            return None;
        }
        if !ops.chars().all(|c| "+-=rwxXstugo".contains(c)) {
            return None;
        }
        let grants = ops.contains('+') || ops.contains('=');
        if grants && ops.contains('w') && (who.is_empty() || who.contains('o') || who.contains('a')) {
            ww = true;
        }
        if grants && ops.contains('s') {
            sid = true;
        }
    }
    Some((ww, sid))
}

/// The leading option words of a program, per its option table.
pub(super) struct Opts<'a> {
    /// Short options without an argument (letters).
    pub(super) flags: &'a str,
    /// Short options with an argument (attached or the next word).
    pub(super) args: &'a str,
    pub(super) long_flags: &'a [&'a str],
    pub(super) long_args: &'a [&'a str],
}

/// How many leading words are options (and their arguments), and the first option the
/// table does not know.
pub(super) fn parse_opts(words: &[Expanded], o: &Opts, numeric: bool) -> (usize, Option<String>) {
    let mut n = 0;
    let mut unknown = None;
    while let Some(w) = words.get(n) {
        let t = w.text.as_str();
        if t == "--" {
            return (n + 1, unknown);
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        if w.dynamic {
            unknown.get_or_insert_with(|| "an option computed at run time".to_string());
            n += 1;
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let name = format!("--{}", long.split('=').next().unwrap_or(long));
            if o.long_args.contains(&name.as_str()) {
                n += if t.contains('=') { 1 } else { 2 };
            } else {
                if !o.long_flags.contains(&name.as_str()) {
                    unknown.get_or_insert_with(|| t.to_string());
                }
                n += 1;
            }
            continue;
        }
        if numeric && t[1..].chars().all(|c| c.is_ascii_digit()) {
            n += 1;
            continue;
        }
        let mut consumed = 1;
        for (k, c) in t[1..].char_indices() {
            if o.args.contains(c) {
                if k + 1 + c.len_utf8() == t.len() {
                    consumed = 2; // value is the next word
                }
                break;
            }
            if !o.flags.contains(c) {
                unknown.get_or_insert_with(|| t.to_string());
                break;
            }
        }
        n += consumed;
    }
    (n.min(words.len()), unknown)
}

/// Operands of a program, skipping options and the arguments of `with_arg` options
/// (short `-x` or long `--xx`; attached `-xVAL`/`--xx=VAL` forms take none).
pub(super) fn operands<'e>(args: &'e [Expanded], with_arg: &[&str]) -> Vec<&'e Expanded> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut done = false;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        if done || !t.starts_with('-') || t == "-" {
            out.push(a);
        } else if t == "--" {
            done = true;
        } else if with_arg.contains(&t) {
            i += 1;
        }
    }
    out
}

/// The value of option `short`/`long`: `-m 4755`, `-m4755`, `-Dm4755` (in a cluster of
/// short options), `--mode=4755`, `--mode 4755`. The last one given wins.
pub(super) fn option_value(args: &[Expanded], short: &str, long: &str) -> Option<Expanded> {
    let letter = short.strip_prefix('-').and_then(|l| l.chars().next());
    let mut found: Option<Expanded> = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        if t == "--" {
            break;
        }
        let value = |v: &str| Expanded {
            text: v.to_string(),
            ..a.clone()
        };
        if !long.is_empty() && t == long {
            found = args.get(i).cloned();
            i += 1;
        } else if let Some(v) = t
            .strip_prefix(long)
            .and_then(|r| r.strip_prefix('='))
            .filter(|_| !long.is_empty())
        {
            found = Some(value(v));
        } else if let (Some(c), false) = (letter, t.starts_with("--")) {
            if let Some(pos) = t.strip_prefix('-').and_then(|r| r.find(c)) {
                let rest = &t[1 + pos + c.len_utf8()..];
                if rest.is_empty() {
                    found = args.get(i).cloned();
                    i += 1;
                } else {
                    found = Some(value(rest));
                }
            }
        }
    }
    found
}

/// Is this `sed` script free of commands that run programs (`e`, `s///e`) or write
/// files (`w`, `W`, `s///w`)? `false` when the script cannot be read.
pub(super) fn sed_script_is_plain(s: &str) -> bool {
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            ' ' | '\t' | '\n' | ';' | '{' | '}' | '!' | ',' | '$' | '0'..='9' | '~' => i += 1,
            '/' | '\\' => {
                // an address regex: `/re/` or `\cREc`
                let d = if c == '\\' {
                    i += 1;
                    match b.get(i) {
                        Some(d) => *d,
                        None => return false,
                    }
                } else {
                    '/'
                };
                i += 1;
                while i < b.len() && b[i] != d {
                    if b[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                // optional `I`/`M` address flags
                while i < b.len() && matches!(b[i], 'I' | 'M') {
                    i += 1;
                }
            }
            's' | 'y' => {
                let Some(&d) = b.get(i + 1) else { return false };
                if d == '\n' || d == '\\' {
                    return false;
                }
                i += 2;
                for _ in 0..2 {
                    while i < b.len() && b[i] != d {
                        if b[i] == '\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    if i >= b.len() {
                        return false;
                    }
                    i += 1;
                }
                if c == 's' {
                    while i < b.len() && !matches!(b[i], ';' | '\n' | '}') {
                        if matches!(b[i], 'e' | 'w' | 'W') {
                            return false;
                        }
                        i += 1;
                    }
                }
            }
            'a' | 'i' | 'c' => {
                // text to the end of the line
                while i < b.len() && b[i] != '\n' {
                    i += 1;
                }
            }
            'b' | 't' | 'T' | ':' | 'r' | 'R' | 'l' | 'L' | 'q' | 'Q' => {
                // a label, a file to read or a number to the end of the command
                while i < b.len() && !matches!(b[i], ';' | '\n') {
                    i += 1;
                }
            }
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | '=' | 'z' | 'F' => i += 1,
            // `e` runs a command, `w`/`W` write files, anything else is not understood
            _ => return false,
        }
    }
    true
}

/// Does an `awk` program stay inside awk (no `system()`, no pipes to or from commands, no
/// output redirected to files, no extensions)?
pub(super) fn awk_program_is_plain(p: &str) -> bool {
    let prints = p.contains("print");
    !(p.contains("system")
        || p.contains('|')
        || p.contains("getline")
        || p.contains('@')
        || p.contains("ENVIRON")
        || (prints && p.contains('>')))
}
/// Decode the body of an ANSI-C quoted string (`$'\x72\x6d'` → `rm`).
pub(super) fn decode_ansi_c(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = it.next() else {
            out.push('\\');
            break;
        };
        let take = |it: &mut std::iter::Peekable<std::str::Chars>, n: usize, radix: u32| {
            let mut v = String::new();
            while v.len() < n {
                match it.peek() {
                    Some(c) if c.is_digit(radix) => {
                        v.push(*c);
                        it.next();
                    }
                    _ => break,
                }
            }
            u32::from_str_radix(&v, radix).ok().and_then(char::from_u32)
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            'x' => out.extend(take(&mut it, 2, 16)),
            'u' => out.extend(take(&mut it, 4, 16)),
            'U' => out.extend(take(&mut it, 8, 16)),
            '0'..='7' => {
                let mut v = e.to_string();
                while v.len() < 3 {
                    match it.peek() {
                        Some(c) if c.is_digit(8) => {
                            v.push(*c);
                            it.next();
                        }
                        _ => break,
                    }
                }
                out.extend(u32::from_str_radix(&v, 8).ok().and_then(char::from_u32));
            }
            'c' => {
                if let Some(x) = it.next() {
                    out.push(char::from((x as u8) & 0x1f));
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// `ssh -o` options that run a local command.
pub(super) fn ssh_option_runs(opt: &str) -> bool {
    let o = opt.to_ascii_lowercase();
    [
        "proxycommand",
        "localcommand",
        "permitlocalcommand",
        "knownhostscommand",
        "remotecommand",
        "match",
        "include",
        "sshaskpass",
    ]
    .iter()
    .any(|k| o.starts_with(k))
}
pub(super) fn is_system_bin(p: &str) -> bool {
    ["/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/", "/usr/local/bin/"]
        .iter()
        .any(|d| p.starts_with(d))
}

pub(super) fn is_inline_flag(t: &str) -> bool {
    matches!(
        t,
        "-c" | "-e" | "-E" | "-r" | "--eval" | "--command" | "-m" | "-p" | "-n"
    )
}

pub(super) fn has_short(a: &Expanded, c: char) -> bool {
    let t = a.text.as_str();
    t.starts_with('-') && !t.starts_with("--") && t[1..].contains(c)
}

/// Options (leading `-…` words, up to `--`) and operands.
pub(super) fn split_flags(args: &[Expanded]) -> (Vec<&Expanded>, Vec<&Expanded>) {
    let mut flags = Vec::new();
    let mut rest = Vec::new();
    let mut done = false;
    for a in args {
        if !done && a.text == "--" {
            done = true;
        } else if !done && a.text.starts_with('-') && a.text.len() > 1 {
            flags.push(a);
        } else {
            rest.push(a);
        }
    }
    (flags, rest)
}
