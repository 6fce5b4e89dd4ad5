//! What one program does with its arguments: one match over program names, the guard's
//! catalogue of behaviours (over 500 lines because it is one table of cases).

use super::*;

impl Analyzer<'_> {
    pub(super) fn leaf(
        &mut self,
        name: &str,
        args: &[Expanded],
        stdin: Option<&Stdin>,
        depth: usize,
        from_input: bool,
    ) {
        if from_input && !READ_ONLY.contains(&name) {
            self.unknown(format!(
                "{name} runs with arguments read from input (xargs, find -exec): the guard cannot see them"
            ));
        }
        if DOWNLOADERS.contains(&name) {
            self.downloads += 1;
            return self.transfer(name, args);
        }
        let shell_version = SHELLS.iter().any(|s| {
            name.strip_prefix(s)
                .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.' || c == '-'))
        });
        if SHELLS.contains(&name) || shell_version {
            if FOREIGN_SHELLS.contains(&name) {
                self.unknown(format!("{name} does not use POSIX shell syntax"));
            }
            return self.shell(name, args, stdin, depth);
        }
        if ADMIN.contains(&name) {
            return self.dangerous(format!(
                "{name} changes users, kernel modules, capabilities or security settings"
            ));
        }
        if matches!(name, "mount" | "umount" | "losetup") && args.iter().any(|a| !a.text.starts_with('-')) {
            return self.unknown(format!("{name} changes what is mounted"));
        }
        if matches!(name, "sqlite3" | "psql" | "mysql" | "mariadb" | "duckdb") {
            let runs = args.iter().any(|a| {
                let t = a.text.to_ascii_lowercase();
                t.contains(".shell") || t.contains(".system") || t.contains("\\!") || t.contains("system ") || a.dynamic
            }) || matches!(stdin, Some(Stdin::File | Stdin::Dynamic { .. }));
            if runs {
                return self.unknown(format!("{name} may run shell commands (.shell, \\!, system)"));
            }
        }
        if matches!(name, "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk") {
            return self.awk(name, args);
        }
        let versioned = INTERPRETER_PREFIXES.iter().any(|p| {
            name.strip_prefix(p)
                .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
        });
        if INTERPRETERS.contains(&name) || versioned {
            if args.iter().any(|a| a.downloads) || (self.downloads > 0 && !args.is_empty()) {
                return self.dangerous(format!("download and execute: {name} runs a downloaded program"));
            }
            if args.iter().all(|a| a.text.starts_with('-') && !is_inline_flag(&a.text)) {
                self.stage.runs_stdin = true;
            }
            return self.unknown(format!("{name} runs a program the guard cannot check"));
        }
        if name == "trap" {
            if args.len() >= 2 && !args[0].text.starts_with('-') {
                self.nested_script(args.first(), depth, "trap");
            }
            return self.unknown("trap runs a command later, on a signal or exit");
        }
        if RUNS_OTHER_CODE.contains(&name) {
            return self.unknown(format!("{name} runs code or commands the guard cannot check"));
        }
        let runner = args
            .iter()
            .position(|a| !a.text.starts_with('-'))
            .filter(|&k| RUNNERS.iter().any(|(p, sub)| *p == name && args[k].text == *sub));
        if runner.is_some() || LOOSE_WRAPPERS.contains(&name) {
            self.unknown(format!("{name} runs a command the guard does not follow exactly"));
            let from = runner.map_or(0, |k| k + 1);
            let rest = &args[from..];
            let (n, _) = parse_opts(
                rest,
                &Opts {
                    flags: "",
                    args: "",
                    long_flags: &[],
                    long_args: &[],
                },
                false,
            );
            let n = if name == "faketime" { n + 1 } else { n };
            if n < rest.len() {
                let rest = rest[n..].to_vec();
                self.nested(|a| a.invoke(&rest, None, depth, false));
            }
            return;
        }
        match name {
            "eval" => {
                self.unknown("eval runs text as a command");
                let e = Expanded {
                    text: args.iter().map(|a| a.text.as_str()).collect::<Vec<_>>().join(" "),
                    dynamic: args.iter().any(|a| a.dynamic),
                    downloads: args.iter().any(|a| a.downloads),
                    ..Expanded::default()
                };
                self.nested_script(Some(&e), depth, "eval")
            }
            "source" | "." => {
                if args.iter().any(|a| a.downloads) || self.downloads > 0 {
                    return self.dangerous("download and execute: sources a downloaded script");
                }
                self.facts.all_poisoned = true;
                self.unknown("sources a script file the guard cannot read")
            }
            "echo" => {
                // Options are words made only of n/e/E; backslashes are interpreted by
                // some shells' echo, so only plain text is known exactly.
                let k = args
                    .iter()
                    .take_while(|a| {
                        a.text.len() > 1 && a.text.starts_with('-') && a.text[1..].chars().all(|c| "neE".contains(c))
                    })
                    .count();
                let lit = &args[k..];
                if !args.iter().any(|a| a.dynamic) && !lit.iter().any(|a| a.text.contains('\\')) {
                    self.stage.prints = Some(lit.iter().map(|a| a.text.as_str()).collect::<Vec<_>>().join(" "));
                }
            }
            "printf" => {
                if let Some(v) = option_value(args, "-v", "") {
                    let v = v.text.clone();
                    self.poison(&v);
                }
                // A lone format with no `%` and no `\` prints itself.
                if let [f] = args {
                    if !f.dynamic && !f.text.contains(['%', '\\']) && !f.text.starts_with('-') {
                        self.stage.prints = Some(f.text.clone());
                    }
                }
            }
            "alias" => {
                for a in args {
                    if let Some((_, body)) = a.text.split_once('=') {
                        let e = Expanded {
                            text: body.to_string(),
                            ..a.clone()
                        };
                        self.nested_script(Some(&e), depth, "alias");
                        self.unknown("alias redefines a command name");
                    }
                }
            }
            "compgen" | "complete" | "bind"
                if args
                    .iter()
                    .any(|a| a.text.starts_with(['-']) && a.text.contains(['C', 'F', 'x'])) =>
            {
                self.unknown(format!("{name} runs a command or function given to it"));
            }
            "read" | "mapfile" | "readarray" | "getopts" => {
                if name != "read" && name != "getopts" && args.iter().any(|a| a.text.starts_with("-C")) {
                    self.unknown(format!("{name} -C runs a callback command"));
                }
                for n in ["REPLY", "MAPFILE", "OPTARG", "OPTIND"] {
                    self.poison(n);
                }
                for a in args {
                    if is_identifier(&a.text) {
                        self.poison(&a.text.clone());
                    }
                }
            }
            "let" => {
                for a in args {
                    self.arithmetic(&a.text.clone(), depth);
                }
            }
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                if args
                    .iter()
                    .any(|a| a.text.starts_with(['-', '+']) && a.text.contains('i'))
                {
                    self.unknown(format!("{name} -i evaluates assigned values as arithmetic"));
                }
                let odd_option = name == "local"
                    || args.iter().any(|a| {
                        (a.text.starts_with('-') || a.text.starts_with('+'))
                            && !a.text[1..].chars().all(|c| "xrg".contains(c))
                    });
                for a in args.iter().filter(|a| !a.text.starts_with(['-', '+'])) {
                    let (n, v) = a.text.split_once('=').unwrap_or((a.text.as_str(), ""));
                    let n = n.trim_end_matches('+').to_string();
                    if !is_identifier(&n) {
                        continue;
                    }
                    if !a.text.contains('=') {
                        if odd_option {
                            self.poison(&n);
                        }
                        continue;
                    }
                    let e = Expanded {
                        text: v.to_string(),
                        ..a.clone()
                    };
                    self.assign(&n, &e, depth);
                    if odd_option || a.text.contains("+=") {
                        self.poison(&n);
                    }
                }
            }
            "unset" => {
                for a in args {
                    self.vars.remove(&a.text);
                }
            }
            "cd" | "pushd" | "chdir" => {
                let ops = operands(args, &[]);
                let new = if name == "pushd" && (ops.is_empty() || ops[0].text.starts_with(['+', '-'])) {
                    vec![Base::Lost]
                } else {
                    self.cd_places(ops.first().copied())
                };
                self.last_cd = Some(new.clone());
                let old = std::mem::replace(&mut self.cwd, new);
                self.union_cwd(old);
            }
            "popd" => self.union_cwd(vec![Base::Lost]),
            "hash" => {
                if args.iter().any(|a| a.text.starts_with("-p")) {
                    self.unknown("hash -p maps a command name to another program");
                }
            }
            "rm" => self.rm(args, from_input),
            "unlink" => {
                for t in operands(args, &[]) {
                    self.critical_file(t, "unlink");
                }
            }
            "chmod" => self.chmod(args),
            "chown" | "chgrp" => {
                if args.iter().any(|a| a.text.starts_with("--reference")) {
                    for t in operands(args, &[]) {
                        self.delete_target(t, "ownership change");
                    }
                    return;
                }
                for t in operands(args, &["--from"]).into_iter().skip(1) {
                    self.delete_target(t, "ownership change");
                }
            }
            "mv" => {
                let ops = operands(args, &["-t", "--target-directory", "-S", "--suffix"]);
                let dest = option_value(args, "-t", "--target-directory");
                let sources = if dest.is_some() {
                    &ops[..]
                } else {
                    &ops[..ops.len().saturating_sub(1)]
                };
                for s in sources {
                    self.delete_target(s, "moving away");
                }
                self.dest(&ops, dest.as_ref(), "mv");
            }
            "cp" | "ln" | "install" => {
                let with_arg: &[&str] = &[
                    "-t",
                    "--target-directory",
                    "-S",
                    "--suffix",
                    "-m",
                    "--mode",
                    "-o",
                    "--owner",
                    "-g",
                    "--group",
                ];
                let ops = operands(args, with_arg);
                if name == "install" {
                    if let Some(m) = option_value(args, "-m", "--mode") {
                        self.mode(&m.text.clone(), m.dynamic, &[], "install -m");
                    }
                    if args.iter().any(|a| a.text == "-d" || a.text == "--directory") {
                        for t in &ops {
                            self.write_target(t, "install -d");
                        }
                        return;
                    }
                }
                let dest = option_value(args, "-t", "--target-directory");
                self.dest(&ops, dest.as_ref(), name);
                if name == "ln" && dest.is_none() && !ops.is_empty() && ops.len() <= 2 {
                    self.record_link(ops[0], ops.get(1).copied());
                }
            }
            "dd" => {
                for a in args {
                    if let Some(of) = a.text.strip_prefix("of=") {
                        let e = Expanded {
                            text: of.to_string(),
                            ..a.clone()
                        };
                        self.write_target(&e, "dd");
                    }
                }
            }
            "tee" | "sponge" => {
                for t in operands(args, &[]) {
                    self.write_target(t, name);
                }
            }
            "truncate" => {
                for t in operands(args, &["-s", "--size", "-r", "--reference"]) {
                    self.write_target(t, name);
                }
            }
            "touch" => {
                for t in operands(args, &["-d", "--date", "-t", "-r", "--reference"]) {
                    self.write_target(t, name);
                }
            }
            "mkdir" => {
                if let Some(m) = option_value(args, "-m", "--mode") {
                    self.mode(&m.text.clone(), m.dynamic, &[], "mkdir -m");
                }
                for t in operands(args, &["-m", "--mode", "--context"]) {
                    self.write_target(t, name);
                }
            }
            "sed" | "gsed" => self.sed(args),
            "sort" => {
                if let Some(o) = option_value(args, "-o", "--output") {
                    let e = Expanded {
                        text: o.text.clone(),
                        ..o.clone()
                    };
                    self.write_target(&e, "sort -o");
                }
                if args.iter().any(|a| a.text.starts_with("--compress-program")) {
                    self.unknown("sort --compress-program runs a program");
                }
            }
            "split" => {
                if args.iter().any(|a| a.text.starts_with("--filter")) {
                    self.unknown("split --filter runs a shell command");
                }
            }
            "zip" => {
                if args.iter().any(|a| has_short(a, 'm') || a.text == "--move") {
                    for t in operands(args, &["-b", "-n", "-t", "-tt", "-x", "-i"])
                        .into_iter()
                        .skip(1)
                    {
                        self.delete_target(t, "zip -m");
                    }
                }
                if args
                    .iter()
                    .any(|a| a.text == "-TT" || a.text.starts_with("--unzip-command"))
                {
                    self.unknown("zip -TT runs a command");
                }
            }
            "unzip" => {
                if let Some(d) = option_value(args, "-d", "") {
                    let e = Expanded {
                        text: d.text.clone(),
                        ..d.clone()
                    };
                    self.write_target(&e, "unzip -d");
                }
            }
            "tar" | "bsdtar" | "gtar" => self.tar(args),
            "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd" | "unzstd" | "lz4" | "lzma"
            | "compress" | "dos2unix" | "unix2dos" => {
                // These replace their operands in place unless told to write elsewhere.
                let elsewhere = args.iter().any(|a| {
                    matches!(
                        a.text.as_str(),
                        "--stdout" | "--to-stdout" | "-l" | "--list" | "-t" | "--test"
                    ) || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('c'))
                        || a.text == "-n"
                });
                if !elsewhere {
                    for t in operands(args, &["-S", "--suffix", "-o", "-T", "--threads"]) {
                        self.write_target(t, name);
                    }
                }
            }
            "setfacl" | "chcon" | "chacl" => {
                for t in operands(
                    args,
                    &[
                        "-m", "-x", "-M", "-X", "--modify", "--remove", "--set", "-u", "-r", "-t", "-l",
                    ],
                ) {
                    self.delete_target(t, "permission change");
                }
            }
            "patch" => {
                if let Some(o) = option_value(args, "-o", "--output") {
                    self.write_target(&o, "patch -o");
                } else if let Some(f) = operands(
                    args,
                    &["-p", "-i", "-d", "-D", "-F", "-o", "-r", "-z", "-B", "-V", "-Y"],
                )
                .first()
                {
                    self.write_target(f, "patch");
                }
            }
            "hdparm" | "nvme" | "sg_format" | "sg_sanitize" | "mdadm" | "lvremove" | "vgremove" | "pvremove"
            | "zfs" | "btrfs" | "dmsetup" | "sfill" | "scrub" => {
                const ERASE: &[&str] = &[
                    "--security-erase",
                    "--security-erase-enhanced",
                    "--trim-sector-ranges",
                    "--write-sector",
                    "--make-bad-sector",
                    "format",
                    "sanitize",
                    "--zero-superblock",
                    "destroy",
                    "remove",
                    "wipe_table",
                    "--create",
                ];
                let erases = matches!(
                    name,
                    "sg_format" | "sg_sanitize" | "lvremove" | "vgremove" | "pvremove" | "sfill" | "scrub"
                ) || args.iter().any(|a| {
                    ERASE
                        .iter()
                        .any(|e| a.text == *e || a.text.starts_with(&format!("{e}=")))
                });
                if erases {
                    self.dangerous(format!("{name} erases or destroys disks, volumes or file systems"));
                }
            }
            "iptables" | "ip6tables" | "nft" | "ufw" | "firewall-cmd" | "iptables-restore" | "pfctl" => {
                const CHANGES: &[&str] = &[
                    "-F",
                    "-X",
                    "-P",
                    "-A",
                    "-I",
                    "-D",
                    "-R",
                    "-Z",
                    "--flush",
                    "--append",
                    "--insert",
                    "--delete",
                    "--policy",
                    "flush",
                    "delete",
                    "add",
                    "insert",
                    "replace",
                    "disable",
                    "reset",
                    "deny",
                    "allow",
                    "--add-rule",
                    "--remove-rule",
                    "--panic-on",
                    "--add-port",
                    "--remove-port",
                    "-f",
                ];
                if name == "iptables-restore" || args.iter().any(|a| CHANGES.contains(&a.text.as_str())) {
                    self.dangerous(format!("{name} changes the firewall"));
                }
            }
            _ if COMPILERS.contains(&name) => {
                // Compilers take `-o FILE` or `-oFILE`, never in a cluster.
                for (k, a) in args.iter().enumerate() {
                    let out = match a.text.strip_prefix("-o") {
                        Some("") => args.get(k + 1).cloned(),
                        Some(f) => Some(Expanded {
                            text: f.to_string(),
                            ..a.clone()
                        }),
                        None => None,
                    };
                    if let Some(o) = out {
                        self.write_target(&o, name);
                    }
                }
            }
            "make" | "gmake" | "ninja" => {
                if args
                    .iter()
                    .any(|a| a.text == "install" || a.text.starts_with("install-"))
                {
                    self.unknown(format!("{name} install writes outside the working directory"));
                }
            }
            "npm" | "pnpm" | "yarn" | "bun" => {
                if args
                    .iter()
                    .any(|a| a.text == "-g" || a.text == "--global" || a.text == "global")
                {
                    self.unknown(format!("{name} installs globally, outside the working directory"));
                }
            }
            "pip" | "pip3" | "uv" | "cargo" => {
                if args
                    .iter()
                    .any(|a| a.text == "--break-system-packages" || a.text == "--system")
                {
                    self.unknown(format!("{name} installs into the system"));
                }
                let dirs: &[(&str, &str)] = if name == "cargo" {
                    &[("", "--root")]
                } else {
                    &[("-t", "--target"), ("", "--prefix"), ("", "--root")]
                };
                for (short, long) in dirs {
                    if let Some(d) = option_value(args, short, long) {
                        self.write_target(&d, name);
                    }
                }
            }
            "apt" | "apt-get" => {
                if args.iter().any(|a| a.text == "-o" || a.text.starts_with("--option")) {
                    self.unknown("apt -o can run commands (Pre-Invoke hooks)");
                }
            }
            "sysctl" => {
                if args
                    .iter()
                    .any(|a| a.text == "-w" || a.text == "-p" || a.text.contains('='))
                {
                    self.dangerous("sysctl changes kernel settings");
                }
            }
            "find" => self.find(args, depth),
            "git" => self.git(args),
            "ssh" => self.ssh(name, args),
            "less" | "more" | "most" | "man" | "pg" => {
                if args.iter().any(|a| {
                    let t = a.text.as_str();
                    t.starts_with('+')
                        || t.starts_with("-P")
                        || t.starts_with("--pager")
                        || t.starts_with("-H")
                        || t.starts_with("--html")
                        || a.dynamic
                }) {
                    self.unknown(format!("{name} is given a start-up command or a pager program"));
                }
            }
            "docker" | "podman" | "nerdctl" | "kubectl" | "oc" => {
                const READS: &[&str] = &[
                    "ps",
                    "images",
                    "logs",
                    "inspect",
                    "version",
                    "info",
                    "pull",
                    "stats",
                    "top",
                    "port",
                    "history",
                    "get",
                    "describe",
                    "explain",
                    "events",
                    "search",
                    "api-resources",
                    "cluster-info",
                ];
                let sub = args.iter().find(|a| !a.text.starts_with('-'));
                if !sub.is_some_and(|s| READS.contains(&s.text.as_str())) {
                    self.unknown(format!("{name} may run commands in a container or cluster"));
                }
            }
            "shred" | "wipe" | "srm" => {
                if let Some(t) = args.iter().find(|a| is_raw_device(&a.text)) {
                    self.dangerous(format!("wipes device {}", t.text));
                } else {
                    for t in operands(args, &["-n", "--iterations", "-s", "--size"]) {
                        self.delete_target(t, "wiping");
                    }
                }
            }
            "init" | "telinit" => {
                if args
                    .iter()
                    .any(|a| matches!(a.text.as_str(), "0" | "6" | "1" | "s" | "S"))
                {
                    self.dangerous(format!("{name} changes the runlevel (shutdown/reboot)"));
                }
            }
            "systemctl" | "loginctl" => {
                const STOP: &[&str] = &[
                    "poweroff",
                    "reboot",
                    "halt",
                    "kexec",
                    "emergency",
                    "rescue",
                    "soft-reboot",
                ];
                if let Some(a) = args.iter().find(|a| STOP.contains(&a.text.as_str())) {
                    self.dangerous(format!("{name} {} shuts down or reboots the machine", a.text));
                }
            }
            "kill" | "pkill" | "killall" => {
                let (_, targets) = split_flags(args);
                let all = args.len() >= 2 && args.last().is_some_and(|a| a.text == "-1");
                if name == "kill" && (all || targets.iter().any(|t| t.text == "1")) {
                    self.dangerous("kill signals every process (or init)");
                }
                if name == "killall" && targets.iter().any(|t| t.text == "init" || t.text == "systemd") {
                    self.dangerous("kills init");
                }
            }
            "killall5" => self.dangerous("killall5 signals every process"),
            "nc" | "ncat" | "netcat" | "socat" | "nc.traditional" | "nc.openbsd" => {
                let exec = args.iter().any(|a| {
                    let t = a.text.to_ascii_lowercase();
                    let short_exec =
                        name != "socat" && t.starts_with('-') && !t.starts_with("--") && t.contains(['e', 'c']);
                    short_exec
                        || t.starts_with("--exec")
                        || t.starts_with("--sh-exec")
                        || t.starts_with("--lua-exec")
                        || t.contains("exec:")
                        || t.contains("system:")
                });
                if exec {
                    self.dangerous(format!("{name} connects a shell to the network (reverse shell)"));
                }
            }
            "du" | "tree" | "ls" | "grep" | "egrep" | "fgrep" | "rgrep" | "rg" | "ag" | "ack" | "locate"
            | "updatedb" | "chattr" => {
                let recursive = match name {
                    "du" | "tree" | "rgrep" | "rg" | "ag" | "ack" => true,
                    "ls" => args.iter().any(|a| has_short(a, 'R') || a.text == "--recursive"),
                    "grep" | "egrep" | "fgrep" => args.iter().any(|a| {
                        has_short(a, 'r')
                            || has_short(a, 'R')
                            || a.text.starts_with("--recursive")
                            || a.text.starts_with("--dereference-recursive")
                    }),
                    "chattr" => args.iter().any(|a| has_short(a, 'R')),
                    _ => false,
                };
                if recursive
                    && args.iter().any(|a| {
                        !a.text.starts_with('-')
                            && !a.dynamic
                            && self.resolve(&a.text).contains(&Place::Abs("/".into()))
                    })
                {
                    self.dangerous(format!("full-disk scan ({name} over /)"));
                }
                if name == "updatedb" {
                    self.dangerous("full-disk scan (updatedb)");
                }
                if name == "chattr" {
                    for t in args.iter().filter(|a| !a.text.starts_with(['+', '-', '='])) {
                        self.delete_target(t, "attribute change");
                    }
                }
            }
            _ => {
                if POWER.contains(&name) {
                    return self.dangerous(format!("{name} shuts down or reboots the machine"));
                }
                if name == "mkfs" || name.starts_with("mkfs.") || DISK_FORMAT.contains(&name) {
                    return self.dangerous(format!("{name} formats or repartitions a disk"));
                }
                if name == "diskutil"
                    && args.iter().any(|a| {
                        a.text.to_ascii_lowercase().starts_with("erase") || a.text.eq_ignore_ascii_case("partitionDisk")
                    })
                {
                    self.dangerous("diskutil erases a disk")
                }
            }
        }
    }
}
