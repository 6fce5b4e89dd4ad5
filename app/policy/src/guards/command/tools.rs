//! Programs with arguments of their own grammar: copies and links, transfers, ssh, git,
//! awk, sed, tar, shells, rm, chmod, find.

use super::*;

impl Analyzer<'_> {
    /// Deleting `t` is dangerous when it is a critical system file.
    pub(super) fn critical_file(&mut self, t: &Expanded, via: &str) {
        if t.dynamic {
            return;
        }
        for p in self.resolve(&t.text) {
            if let Place::Abs(n) = p {
                if CRITICAL_FILES.contains(&n.as_str()) {
                    return self.dangerous(format!("{via} deletes system file {n}"));
                }
            }
        }
    }

    /// The destination of `cp`/`mv`/`ln`/`install`: `-t DIR`, else the last operand.
    pub(super) fn dest(&mut self, ops: &[&Expanded], dest: Option<&Expanded>, via: &str) {
        if let Some(d) = dest {
            return self.write_target(d, via);
        }
        if let [target] = ops {
            if via == "ln" {
                // `ln -s TARGET` makes a link of the same name in the working directory.
                let e = Expanded {
                    text: basename(target.text.trim_end_matches('/')).to_string(),
                    ..(*target).clone()
                };
                return self.write_target(&e, via);
            }
        }
        if let Some(last) = ops.last() {
            if ops.len() >= 2 {
                self.write_target(last, via);
            }
        }
    }

    /// `ln TARGET [LINK]`: later paths through LINK are judged as paths through TARGET.
    pub(super) fn record_link(&mut self, target: &Expanded, link: Option<&Expanded>) {
        let link_text = match link {
            Some(l) => l.text.clone(),
            None => basename(target.text.trim_end_matches('/')).to_string(),
        };
        let real = if target.dynamic {
            None
        } else {
            match self.resolve(&target.text).as_slice() {
                [Place::Abs(n)] | [Place::Inside(n)] => Some(n.clone()),
                _ => None,
            }
        };
        if link.is_some_and(|l| l.dynamic) {
            return;
        }
        for p in self.resolve(&link_text) {
            if let Place::Abs(n) | Place::Inside(n) = p {
                self.links.push((n, real.clone()));
            }
        }
    }

    /// Downloaders and copy tools: options that run programs, and local files written.
    pub(super) fn transfer(&mut self, name: &str, args: &[Expanded]) {
        for (i, a) in args.iter().enumerate() {
            let t = a.text.as_str();
            let next = args.get(i + 1).map(|e| e.text.to_ascii_lowercase()).unwrap_or_default();
            let opt = if t == "-o" {
                next
            } else {
                t.strip_prefix("-o").unwrap_or("").to_ascii_lowercase()
            };
            if matches!(name, "scp" | "sftp" | "rsync") && !opt.is_empty() && ssh_option_runs(&opt) {
                self.unknown(format!("{name} -o {opt}: ssh runs a local command"));
            }
            if matches!(name, "scp" | "sftp") && (t.starts_with("-S") || t.starts_with("-F") || t.starts_with("-D")) {
                self.unknown(format!("{name} {t} runs another program or reads an ssh config"));
            }
            if name == "rsync"
                && (t == "-e"
                    || t.starts_with("--rsh")
                    || t.starts_with("--rsync-path")
                    || (t.starts_with('-') && !t.starts_with("--") && t.contains('e')))
            {
                self.unknown(format!("rsync {t} runs a remote shell command"));
            }
            if name == "curl" && (t == "-K" || t.starts_with("--config")) {
                self.unknown("curl reads options from a config file");
            }
            if name == "wget" && (t == "-e" || t.starts_with("--execute") || t.starts_with("--config")) {
                self.unknown("wget runs wgetrc commands");
            }
        }
        let out = match name {
            "curl" => option_value(args, "-o", "--output").map(|o| o.text.clone()),
            "wget" => option_value(args, "-O", "--output-document")
                .map(|o| o.text.clone())
                .or_else(|| option_value(args, "-P", "--directory-prefix").map(|o| o.text.clone())),
            "scp" | "rsync" => {
                let ops = operands(args, &["-e", "-i", "-P", "-o", "-F", "-S", "-l", "-c", "-J", "--rsh"]);
                ops.last()
                    .filter(|l| ops.len() >= 2 && !l.text.split('/').next().unwrap_or("").contains(':'))
                    .map(|l| l.text.clone())
            }
            _ => None,
        };
        // `curl -O URL`, `wget URL`: the file is named after the URL, in the working
        // directory (or `wget -P DIR`).
        let remote_name = match name {
            "curl" => args.iter().any(|a| {
                a.text.starts_with("--remote-name")
                    || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains(['O', 'J']))
            }),
            "wget" => option_value(args, "-O", "--output-document").is_none(),
            _ => false,
        };
        if remote_name {
            let dir = if name == "wget" {
                option_value(args, "-P", "--directory-prefix").map(|d| d.text.clone())
            } else {
                option_value(args, "", "--output-dir").map(|d| d.text.clone())
            };
            for u in args.iter().filter(|a| a.text.contains("://")) {
                let path = u.text.split(['?', '#']).next().unwrap_or("");
                let file = path
                    .rsplit('/')
                    .next()
                    .filter(|f| !f.is_empty())
                    .unwrap_or("index.html");
                let e = Expanded {
                    text: match &dir {
                        Some(d) => format!("{d}/{file}"),
                        None => file.to_string(),
                    },
                    dynamic: u.dynamic,
                    ..Expanded::default()
                };
                self.write_target(&e, name);
            }
        }
        if let Some(o) = out {
            let dynamic = args.iter().any(|a| a.dynamic && a.text.contains(&o));
            let e = Expanded {
                text: o,
                dynamic,
                ..Expanded::default()
            };
            self.write_target(&e, name);
        }
    }

    pub(super) fn ssh(&mut self, name: &str, args: &[Expanded]) {
        let mut i = 0;
        let mut operands = 0;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            i += 1;
            if t == "--" {
                operands += args.len() - i;
                break;
            }
            if t.starts_with('-') && operands == 0 {
                let last = t.chars().last().unwrap_or('-');
                let takes = "BbcDEeFIiJLlmOoPpQRSWw".contains(last) && t.len() == 2;
                let value = if takes {
                    i += 1;
                    args.get(i - 1).map(|e| e.text.to_ascii_lowercase()).unwrap_or_default()
                } else {
                    t[2.min(t.len())..].to_ascii_lowercase()
                };
                if t.starts_with("-o") && ssh_option_runs(&value) {
                    self.unknown(format!("{name} -o {value}: runs a local command"));
                }
                if t.starts_with("-F") {
                    self.unknown(format!("{name} -F reads a config file that may run commands"));
                }
                continue;
            }
            operands += 1;
        }
        if operands > 1 {
            self.unknown(format!("{name} runs a command on another machine"));
        }
    }

    pub(super) fn git(&mut self, args: &[Expanded]) {
        let mut i = 0;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            if t == "-c" {
                self.git_config_key(args.get(i + 1).map(|e| e.text.as_str()).unwrap_or(""), true);
                i += 2;
            } else if t.starts_with("--config-env") || (t.starts_with("--exec-path") && t.contains('=')) {
                self.unknown(format!("git {t} can make git run another program"));
                i += 1;
            } else if matches!(t, "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix") {
                i += 2;
            } else if t.starts_with('-') {
                i += 1;
            } else {
                break;
            }
        }
        let Some(sub) = args.get(i) else { return };
        let rest = &args[i + 1..];
        let sub = sub.text.as_str();
        for a in rest {
            let t = a.text.as_str();
            let lower = t.to_ascii_lowercase();
            let runs = t.starts_with("--upload-pack")
                || t.starts_with("--receive-pack")
                || t.starts_with("--exec")
                || t.starts_with("--extcmd")
                || t.starts_with("--open-files-in-pager")
                || t.starts_with("--template")
                || lower.starts_with("ext::")
                || lower.starts_with("fd::")
                || (matches!(sub, "clone" | "fetch" | "pull" | "ls-remote" | "archive") && t == "-u")
                || (matches!(sub, "rebase") && (t == "-x" || t == "-i" || t == "--interactive"))
                || (matches!(sub, "grep") && t.starts_with("-O"))
                || (matches!(sub, "difftool") && (t == "-x" || t == "-t" || t.starts_with("--tool")));
            if runs {
                self.unknown(format!("git {sub} {t} runs another program"));
            }
            if a.dynamic && sub == "config" {
                self.unknown("git config with a value computed at run time");
            }
        }
        match sub {
            "config" => {
                let ops = operands(rest, &["-f", "--file", "--blob", "--type", "--default", "--comment"]);
                if rest.iter().any(|a| a.text == "-e" || a.text == "--edit") {
                    self.unknown("git config --edit runs an editor");
                }
                let reading = rest.iter().any(|a| {
                    a.text.starts_with("--get")
                        || a.text == "-l"
                        || a.text == "--list"
                        || a.text.starts_with("--unset")
                        || a.text == "--show-origin"
                });
                if let Some(k) = ops.first() {
                    if !reading && (ops.len() >= 2 || rest.iter().any(|a| a.text == "set")) {
                        let key = if k.text == "set" {
                            ops.get(1).map(|e| e.text.as_str()).unwrap_or("")
                        } else {
                            k.text.as_str()
                        };
                        self.git_config_key(key, false);
                    }
                }
            }
            "init" => {
                if let Some(d) = operands(rest, &["--template", "--separate-git-dir", "-b", "--initial-branch"]).first()
                {
                    self.write_target(d, "git init");
                }
            }
            "clone" | "submodule" => {
                if sub == "clone" {
                    let ops = operands(
                        rest,
                        &[
                            "-o",
                            "--origin",
                            "-b",
                            "--branch",
                            "-u",
                            "--depth",
                            "--reference",
                            "-j",
                            "--jobs",
                            "-c",
                            "--config",
                        ],
                    );
                    if let [_, dir, ..] = ops.as_slice() {
                        self.write_target(dir, "git clone");
                    }
                }
                for (k, a) in rest.iter().enumerate() {
                    if a.text == "-c" || a.text == "--config" {
                        self.git_config_key(rest.get(k + 1).map(|e| e.text.as_str()).unwrap_or(""), true);
                    } else if let Some(v) = a.text.strip_prefix("--config=") {
                        self.git_config_key(v, true);
                    }
                }
                if sub == "submodule" && rest.iter().any(|a| a.text == "foreach") {
                    self.unknown("git submodule foreach runs a shell command");
                }
            }
            "bisect" if rest.first().is_some_and(|a| a.text == "run") => {
                self.unknown("git bisect run runs a command");
            }
            "filter-branch" | "filter-repo" | "mergetool" | "daemon" | "instaweb" | "web--browse" | "send-email"
            | "shell" | "upload-pack" | "receive-pack" => {
                self.unknown(format!("git {sub} runs other programs"));
            }
            _ => {}
        }
    }

    /// `git -c KEY=VALUE` / `git config KEY VALUE`: only keys that cannot run anything.
    pub(super) fn git_config_key(&mut self, kv: &str, with_value: bool) {
        let key = if with_value {
            kv.split('=').next().unwrap_or(kv)
        } else {
            kv
        }
        .to_ascii_lowercase();
        if !GIT_SAFE_KEYS.iter().any(|s| {
            if s.ends_with('.') {
                key.starts_with(s)
            } else {
                key == *s
            }
        }) {
            self.unknown(format!("git configuration {key} may make git run a program"));
        }
    }

    pub(super) fn awk(&mut self, name: &str, args: &[Expanded]) {
        let mut i = 0;
        let mut program = None;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            i += 1;
            if t == "--" {
                program = args.get(i);
                break;
            }
            if t == "-F" || t == "-v" || t == "--field-separator" || t == "--assign" {
                i += 1;
            } else if t.starts_with("-F")
                || t.starts_with("-v")
                || t.starts_with("--field-separator=")
                || t.starts_with("--assign=")
            {
            } else if t.starts_with('-') && t != "-" {
                return self.unknown(format!(
                    "{name} {t}: a program file, an extension or an option the guard does not model"
                ));
            } else {
                program = Some(a);
                break;
            }
        }
        match program {
            None => self.unknown(format!("{name} without a program")),
            Some(p) if p.dynamic => self.unknown(format!("{name} runs a program computed at run time")),
            Some(p) if !awk_program_is_plain(&p.text) => {
                self.unknown(format!("{name} program runs commands or writes files"))
            }
            Some(_) => {}
        }
    }

    pub(super) fn sed(&mut self, args: &[Expanded]) {
        let mut scripts: Vec<&Expanded> = Vec::new();
        let mut files: Vec<&Expanded> = Vec::new();
        let mut in_place = false;
        let mut explicit = false;
        let mut i = 0;
        let mut done = false;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            i += 1;
            if done || !t.starts_with('-') || t == "-" {
                files.push(a);
                continue;
            }
            if t == "--" {
                done = true;
            } else if t == "-e" || t == "--expression" {
                explicit = true;
                if let Some(s) = args.get(i) {
                    scripts.push(s);
                }
                i += 1;
            } else if t.starts_with("--expression=") || (t.starts_with("-e") && !t.starts_with("--")) {
                explicit = true;
                scripts.push(a);
            } else if t == "-f" || t.starts_with("--file") || (t.starts_with("-f") && !t.starts_with("--")) {
                return self.unknown("sed reads its script from a file");
            } else if t == "-l" || t == "--line-length" {
                i += 1;
            } else if t.starts_with("--in-place") {
                in_place = true;
            } else if !t.starts_with("--") {
                if t[1..].contains('i') {
                    in_place = true;
                }
                if !t[1..].chars().all(|c| "nrEsuzi".contains(c)) && !t.starts_with("-i") {
                    self.unknown(format!("sed option {t} is not modelled"));
                }
            }
        }
        if !explicit && !files.is_empty() {
            scripts.push(files.remove(0));
        }
        for s in scripts {
            let text = s.text.strip_prefix("--expression=").unwrap_or(&s.text);
            let text = if text == s.text && text.starts_with("-e") {
                &text[2..]
            } else {
                text
            };
            if s.dynamic {
                self.unknown("sed script computed at run time");
            } else if !sed_script_is_plain(text) {
                self.unknown("sed script runs commands or writes files (e, w) or is not understood");
            }
        }
        if in_place {
            for f in files {
                self.write_target(f, "sed -i");
            }
        }
    }

    pub(super) fn tar(&mut self, args: &[Expanded]) {
        if args.iter().any(|a| a.text == "--remove-files") {
            for t in operands(args, &["-f", "-C", "--file", "--directory", "-T", "-X"])
                .into_iter()
                .skip(1)
            {
                self.delete_target(t, "tar --remove-files");
            }
        }
        let mut extract = false;
        for (k, a) in args.iter().enumerate() {
            let t = a.text.as_str();
            let cluster = if t.starts_with('-') && !t.starts_with("--") {
                Some(&t[1..])
            } else if k == 0 && !t.starts_with('-') {
                Some(t) // old-style `tar xzf`
            } else {
                None
            };
            if let Some(c) = cluster {
                if c.contains('x') {
                    extract = true;
                }
                if c.contains(['I', 'F']) {
                    self.unknown(format!("tar {t} runs a program"));
                }
                if c.contains('P') {
                    self.unknown("tar -P extracts absolute paths from the archive");
                }
            }
            if t == "--extract" || t == "--get" {
                extract = true;
            }
            for o in [
                "--to-command",
                "--checkpoint-action",
                "--use-compress-program",
                "--rsh-command",
                "--info-script",
                "--new-volume-script",
                "--rmt-command",
                "--absolute-names",
            ] {
                if t.starts_with(o) {
                    self.unknown(format!("tar {o} runs a program or writes outside the directory"));
                }
            }
        }
        if extract {
            match option_value(args, "-C", "--directory") {
                Some(d) => {
                    let e = Expanded {
                        text: d.text.clone(),
                        ..d.clone()
                    };
                    self.write_target(&e, "tar extraction")
                }
                None => self.write_target(&Expanded::lit("."), "tar extraction"),
            }
        }
    }

    pub(super) fn shell(&mut self, name: &str, args: &[Expanded], stdin: Option<&Stdin>, depth: usize) {
        // Options first; with `-c` the first operand is the script (`bash -c -x 'cmd'`,
        // `sh -c -- 'cmd'`), otherwise it is a script file.
        let mut i = 0;
        let mut inline = false;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            if a.dynamic && t.starts_with(['-', '+', '$']) {
                self.unknown(format!("{name} gets an option computed at run time"));
            }
            if t == "--" || t == "-" {
                i += 1;
                break;
            }
            if let Some(long) = t.strip_prefix("--") {
                if long.starts_with("rcfile") || long.starts_with("init-file") {
                    self.unknown(format!("{name} {t} runs a start-up file"));
                }
                i += if matches!(long, "rcfile" | "init-file") { 2 } else { 1 };
                continue;
            }
            if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
                if t.starts_with('-') && t[1..].contains('c') {
                    inline = true;
                }
                // `-o NAME` / `-O NAME`, also inside a cluster (`-eo pipefail`).
                i += 1 + t[1..].chars().filter(|c| *c == 'o' || *c == 'O').count();
                continue;
            }
            break;
        }
        if inline {
            return self.nested_script(args.get(i), depth, &format!("{name} -c"));
        }
        if let Some(script) = args.get(i) {
            if script.downloads || self.downloads > 0 {
                return self.dangerous(format!("download and execute: {name} runs a downloaded script"));
            }
            return self.unknown(format!("{name} runs script file {} the guard cannot read", script.text));
        }
        match stdin {
            Some(Stdin::Text(text)) => {
                let text = text.clone();
                self.subshell(|a| a.script(&text, depth + 1))
            }
            Some(Stdin::Dynamic { downloads: true }) => {
                self.dangerous(format!("download and execute: {name} reads a downloaded script"))
            }
            Some(Stdin::Dynamic { .. }) => self.unknown(format!("{name} reads a script computed at run time")),
            Some(Stdin::File) => self.unknown(format!("{name} reads its script from a file or redirect")),
            None => self.stage.runs_stdin = true,
        }
    }

    pub(super) fn rm(&mut self, args: &[Expanded], from_input: bool) {
        let mut recursive = false;
        let mut targets = Vec::new();
        let mut opts_done = false;
        for a in args {
            let t = a.text.as_str();
            if !opts_done && t == "--" {
                opts_done = true;
            } else if !opts_done && t.starts_with("--") {
                match t {
                    "--recursive" => recursive = true,
                    "--no-preserve-root" => return self.dangerous("rm --no-preserve-root: deletion of /"),
                    _ => {}
                }
            } else if !opts_done && t.starts_with('-') && t.len() > 1 && !a.dynamic {
                if t[1..].contains(['r', 'R']) {
                    recursive = true;
                }
            } else {
                targets.push(a);
            }
        }
        if !recursive {
            for t in &targets {
                self.critical_file(t, "rm");
            }
            return;
        }
        for t in &targets {
            self.delete_target(t, "recursive deletion");
            if self.done() {
                return;
            }
        }
        if targets.is_empty() && from_input {
            self.unknown("recursive deletion of paths read from input");
        }
    }

    /// A mode given to `chmod`, `install -m` or `mkdir -m`.
    pub(super) fn mode(&mut self, m: &str, dynamic: bool, targets: &[&Expanded], via: &str) {
        if dynamic {
            return self.unknown(format!("{via} with a mode computed at run time"));
        }
        match mode_bits(m) {
            None => self.unknown(format!("{via}: mode {m} is not understood")),
            Some((_, true)) => self.dangerous(format!("{via} {m} sets the setuid/setgid bit (privilege escalation)")),
            Some((true, false)) => {
                for t in targets {
                    self.delete_target(t, &format!("{via} {m}: making world-writable"));
                }
            }
            Some((false, false)) => {}
        }
    }

    pub(super) fn chmod(&mut self, args: &[Expanded]) {
        if args.iter().any(|a| a.text.starts_with("--reference")) {
            return self.unknown("chmod --reference copies a mode the guard cannot see");
        }
        let (flags, rest) = split_flags(args);
        let recursive = flags.iter().any(|f| has_short(f, 'R') || f.text == "--recursive");
        // `chmod -x f`, `chmod -w+s f`: a mode that starts with `-` looks like an option.
        let (mode, targets) = match flags.iter().find(|f| mode_bits(&f.text).is_some()) {
            Some(m) => (*m, &rest[..]),
            None => match rest.split_first() {
                Some((m, t)) => (*m, t),
                None => return,
            },
        };
        self.mode(&mode.text, mode.dynamic, targets, "chmod");
        // Any mode over a whole system tree (`chmod -R 000 /usr`, `chmod 0 /`) breaks it.
        for t in targets {
            if recursive {
                self.delete_target(t, "recursive mode change");
            } else if !t.dynamic {
                for p in self.resolve(&t.text) {
                    if let Place::Abs(n) = p {
                        let e = Expanded {
                            text: n,
                            glob: t.glob,
                            ..Expanded::default()
                        };
                        if let Some(s) = system_target(&e) {
                            return self.dangerous(format!("mode change of {s}"));
                        }
                    }
                }
            }
        }
    }

    pub(super) fn find(&mut self, args: &[Expanded], depth: usize) {
        let starts: Vec<&Expanded> = args
            .iter()
            .take_while(|a| !a.text.starts_with('-') && a.text != "(" && a.text != "!")
            .collect();
        let shallow = args
            .windows(2)
            .any(|w| (w[0].text == "-maxdepth") && w[1].text.parse::<u32>().is_ok_and(|d| d <= 2));
        let abs: Vec<(String, bool)> = starts
            .iter()
            .filter(|s| !s.dynamic)
            .flat_map(|s| {
                self.resolve(&s.text).into_iter().filter_map(move |p| match p {
                    Place::Abs(n) => Some((n, s.glob)),
                    _ => None,
                })
            })
            .collect();
        if !shallow && abs.iter().any(|(n, _)| n == "/") {
            return self.dangerous("full-disk scan (find /)");
        }
        let sys = abs.iter().find_map(|(n, g)| deletion_target(n, *g));
        let deletes = args.iter().any(|a| a.text == "-delete");
        if deletes {
            if let Some(t) = &sys {
                return self.dangerous(format!("recursive deletion under {t} (find -delete)"));
            }
            self.unknown("find -delete removes files the guard cannot list");
        }
        let mut i = 0;
        while i < args.len() {
            let t = args[i].text.as_str();
            if matches!(t, "-fprint" | "-fprint0" | "-fprintf" | "-fls") {
                if let Some(f) = args.get(i + 1) {
                    self.write_target(f, "find");
                }
            }
            if matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir") {
                let end = args[i + 1..]
                    .iter()
                    .position(|a| a.text == ";" || a.text == "+")
                    .map_or(args.len(), |p| i + 1 + p);
                let cmd = &args[i + 1..end];
                if let (Some(t), Some(first)) = (&sys, cmd.first()) {
                    if matches!(basename(&first.text), "rm" | "shred" | "unlink") {
                        return self.dangerous(format!("deletes files under {t} (find -exec)"));
                    }
                }
                self.nested(|a| a.invoke(cmd, None, depth, true));
                i = end;
            }
            i += 1;
        }
    }
}
