//! Running a simple command: wrappers (`env`, `sudo`, `xargs`, …) peeled off down to the
//! program that actually runs, and nested scripts followed.

use super::*;

impl Analyzer<'_> {
    /// Judge one invocation: peel wrappers, recurse into nested scripts, then check the
    /// real command. `from_input`: arguments also come from standard input (xargs).
    pub(super) fn invoke(&mut self, words: &[Expanded], stdin: Option<&Stdin>, depth: usize, from_input: bool) {
        let saved = self.cwd.clone();
        let mut changes_dir = false;
        self.invoke_inner(words, stdin, depth, from_input, &mut changes_dir);
        if !changes_dir {
            // Only `cd` and friends move the shell; `env -C` moves the one command.
            self.cwd = saved;
        }
    }

    pub(super) fn wrapper_opts(&mut self, name: &str, rest: &[Expanded], o: &Opts, numeric: bool) -> usize {
        let (n, unknown) = parse_opts(rest, o, numeric);
        if let Some(u) = unknown {
            self.unknown(format!("{name} option {u} is not modelled"));
        }
        n
    }

    pub(super) fn invoke_inner(
        &mut self,
        words: &[Expanded],
        stdin: Option<&Stdin>,
        depth: usize,
        from_input: bool,
        changes_dir: &mut bool,
    ) {
        const NONE: Opts = Opts {
            flags: "",
            args: "",
            long_flags: &[],
            long_args: &[],
        };
        let mut i = 0;
        let mut from_input = from_input;
        loop {
            let Some(w) = words.get(i) else { return };
            if w.dynamic {
                if w.downloads {
                    return self.dangerous("download and execute: the command name comes from a download");
                }
                return self.unknown("the command name is computed at run time");
            }
            if w.text.is_empty() {
                return self.unknown("empty command name");
            }
            if w.brace {
                self.unknown("the command name comes from a brace expansion");
            }
            if w.glob && has_glob(&w.text) {
                self.unknown("the command name is a glob pattern");
            }
            let name = canonical_name(basename(&w.text).to_ascii_lowercase());
            let rest = &words[i + 1..];
            if self.functions.iter().any(|f| f.eq_ignore_ascii_case(&name)) {
                return self.dangerous(format!("function {name} calls itself: fork bomb pattern"));
            }
            if self.facts.functions.contains(&name) {
                self.unknown(format!(
                    "{name} is a shell function defined in the command (it shadows any program of that name)"
                ));
            }
            if self.deny.contains(&name) {
                return self.dangerous(format!("{name} is on this guard's deny list"));
            }
            if PRIVILEGE.contains(&name.as_str()) {
                return self.dangerous(format!("privilege escalation ({name})"));
            }
            if w.text.contains('/') {
                if self.downloads > 0 && !is_system_bin(&w.text) {
                    return self.dangerous(format!("download and execute: runs {} after a download", w.text));
                }
                let written = self.resolve(&w.text).into_iter().any(|p| match p {
                    Place::Abs(n) | Place::Inside(n) => self.written.contains(&n),
                    _ => false,
                });
                if written {
                    self.unknown(format!("runs {}, a file written earlier in the same command", w.text));
                }
            }
            let skip = match name.as_str() {
                "nohup" | "builtin" | "catchsegv" => Some(self.wrapper_opts(&name, rest, &NONE, false)),
                "unbuffer" => Some(self.wrapper_opts(&name, rest, &Opts { flags: "p", ..NONE }, false)),
                "proxychains" | "proxychains4" => Some(self.wrapper_opts(
                    &name,
                    rest,
                    &Opts {
                        flags: "q",
                        args: "f",
                        ..NONE
                    },
                    false,
                )),
                "torsocks" => Some(self.wrapper_opts(&name, rest, &NONE, false)),
                "busybox" | "toybox" | "coreutils" => Some(0),
                "time" => {
                    if let Some(o) = option_value(rest, "-o", "--output") {
                        let e = Expanded {
                            text: o.text.clone(),
                            ..o.clone()
                        };
                        self.write_target(&e, "time -o");
                    }
                    Some(self.wrapper_opts(
                        &name,
                        rest,
                        &Opts {
                            flags: "pvaq",
                            args: "fo",
                            long_flags: &["--portability", "--verbose", "--append", "--quiet"],
                            long_args: &["--format", "--output"],
                        },
                        false,
                    ))
                }
                "command" => {
                    let (n, _) = parse_opts(rest, &NONE, false);
                    if rest[..n].iter().any(|a| a.text.contains(['v', 'V'])) {
                        return; // a lookup, runs nothing
                    }
                    Some(self.wrapper_opts(&name, rest, &Opts { flags: "p", ..NONE }, false))
                }
                "exec" if rest.is_empty() => {
                    if stdin.is_some() {
                        self.unknown("exec redirects the shell's own input: later commands may come from it");
                    }
                    return;
                }
                "exec" => Some(self.wrapper_opts(
                    &name,
                    rest,
                    &Opts {
                        flags: "cl",
                        args: "a",
                        ..NONE
                    },
                    false,
                )),
                "nice" => Some(self.wrapper_opts(
                    &name,
                    rest,
                    &Opts {
                        args: "n",
                        long_args: &["--adjustment"],
                        ..NONE
                    },
                    true,
                )),
                "ionice" => {
                    if rest.iter().any(|a| a.text == "-p" || a.text == "-P" || a.text == "-u") {
                        return;
                    }
                    Some(self.wrapper_opts(
                        &name,
                        rest,
                        &Opts {
                            flags: "t",
                            args: "cn",
                            long_flags: &["--ignore"],
                            long_args: &["--class", "--classdata"],
                        },
                        false,
                    ))
                }
                "stdbuf" => Some(self.wrapper_opts(
                    &name,
                    rest,
                    &Opts {
                        args: "ioe",
                        long_args: &["--input", "--output", "--error"],
                        ..NONE
                    },
                    false,
                )),
                "setsid" => Some(self.wrapper_opts(
                    &name,
                    rest,
                    &Opts {
                        flags: "cfw",
                        long_flags: &["--ctty", "--fork", "--wait"],
                        ..NONE
                    },
                    false,
                )),
                "timeout" => Some(
                    self.wrapper_opts(
                        &name,
                        rest,
                        &Opts {
                            flags: "v",
                            args: "sk",
                            long_flags: &["--preserve-status", "--foreground", "--verbose"],
                            long_args: &["--signal", "--kill-after"],
                        },
                        false,
                    ) + 1,
                ),
                "chroot" | "chrt" | "taskset" | "unshare" => {
                    // Not followed exactly (another root, namespaces, numeric arguments);
                    // the wrapped command is still checked for danger.
                    self.unknown(format!("{name} runs a command the guard does not follow exactly"));
                    let (n, _) = parse_opts(rest, &NONE, false);
                    Some(if name == "unshare" { n } else { n + 1 })
                }
                "xargs" => {
                    from_input = true;
                    let n = self.wrapper_opts(
                        &name,
                        rest,
                        &Opts {
                            flags: "0prtxoeil",
                            args: "adEILnPs",
                            long_flags: &[
                                "--null",
                                "--interactive",
                                "--no-run-if-empty",
                                "--verbose",
                                "--exit",
                                "--open-tty",
                                "--show-limits",
                                "--replace",
                                "--eof",
                                "--max-lines",
                            ],
                            long_args: &[
                                "--arg-file",
                                "--delimiter",
                                "--max-args",
                                "--max-procs",
                                "--max-chars",
                                "--process-slot-var",
                            ],
                        },
                        false,
                    );
                    if n >= rest.len() {
                        return; // xargs with no command runs echo
                    }
                    Some(n)
                }
                "env" => match self.env(rest, depth) {
                    Some(n) if n >= rest.len() => return, // prints the environment
                    Some(n) => Some(n),
                    None => return,
                },
                "flock" => {
                    self.unknown("flock runs a command the guard does not follow exactly");
                    if let Some(pos) = rest.iter().position(|a| a.text == "-c" || a.text == "--command") {
                        return self.nested_script(rest.get(pos + 1), depth, "flock -c");
                    }
                    let (n, _) = parse_opts(
                        rest,
                        &Opts {
                            flags: "sxenuoF",
                            args: "wE",
                            long_flags: &[],
                            long_args: &["--timeout", "--conflict-exit-code"],
                        },
                        false,
                    );
                    Some(n + 1)
                }
                "watch" => {
                    self.unknown("watch runs a command repeatedly through a shell");
                    let (n, _) = parse_opts(
                        rest,
                        &Opts {
                            flags: "bcdeghprtwx",
                            args: "nq",
                            long_flags: &[],
                            long_args: &["--interval"],
                        },
                        false,
                    );
                    let text: Vec<&str> = rest[n.min(rest.len())..].iter().map(|e| e.text.as_str()).collect();
                    let e = Expanded {
                        text: text.join(" "),
                        dynamic: rest.iter().any(|e| e.dynamic),
                        downloads: rest.iter().any(|e| e.downloads),
                        ..Expanded::default()
                    };
                    return self.nested_script(Some(&e), depth, "watch");
                }
                _ => None,
            };
            if let Some(n) = skip {
                i += 1 + n;
                if i >= words.len() {
                    return;
                }
                continue;
            }
            if matches!(name.as_str(), "cd" | "pushd" | "popd" | "chdir") {
                *changes_dir = true;
            }
            return self.leaf(&name, rest, stdin, depth, from_input);
        }
    }

    /// `env [OPTIONS] [NAME=VALUE]… [COMMAND]`: how many words before the command, or
    /// `None` when the rest was handled (`-S`).
    pub(super) fn env(&mut self, rest: &[Expanded], depth: usize) -> Option<usize> {
        let mut n = 0;
        while let Some(a) = rest.get(n) {
            let t = a.text.as_str();
            if t == "-S" || t == "--split-string" {
                self.unknown("env -S splits its string by its own rules");
                self.nested_script(rest.get(n + 1), depth, "env -S");
                return None;
            }
            if let Some(s) = t
                .strip_prefix("--split-string=")
                .or_else(|| t.strip_prefix("-S").filter(|s| !s.is_empty()))
            {
                self.unknown("env -S splits its string by its own rules");
                let e = Expanded {
                    text: s.to_string(),
                    ..a.clone()
                };
                self.nested_script(Some(&e), depth, "env -S");
                return None;
            }
            if t == "--" {
                n += 1;
                break;
            }
            let chdir = if t == "-C" || t == "--chdir" {
                n += 1;
                rest.get(n).cloned()
            } else {
                t.strip_prefix("--chdir=")
                    .or_else(|| t.strip_prefix("-C"))
                    .map(|d| Expanded {
                        text: d.to_string(),
                        ..a.clone()
                    })
            };
            if let Some(d) = chdir {
                self.cwd = self.cd_places(Some(&d));
                n += 1;
                continue;
            }
            if t == "-u" || t == "--unset" {
                n += 2;
            } else if t.starts_with("--unset=")
                || t.starts_with("--default-signal")
                || t.starts_with("--ignore-signal")
                || t.starts_with("--block-signal")
                || matches!(
                    t,
                    "-i" | "-" | "--ignore-environment" | "-0" | "--null" | "-v" | "--debug" | "--list-signal-handling"
                )
                || (t.starts_with("-u") && t.len() > 2)
            {
                n += 1;
            } else if t.starts_with('-') {
                self.unknown(format!("env option {t} is not modelled"));
                n += 1;
            } else if let Some((k, _)) = t.split_once('=').filter(|(k, _)| !k.is_empty()) {
                if k == "IFS" || is_code_env(k) {
                    self.unknown(format!("{k} is set: it can make programs run other programs"));
                }
                n += 1;
            } else {
                break;
            }
        }
        Some(n)
    }

    /// Where `cd TARGET` may lead.
    pub(super) fn cd_places(&self, target: Option<&Expanded>) -> Vec<Base> {
        let Some(t) = target else {
            return vec![Base::Abs("~".into())];
        };
        if t.dynamic || t.text == "-" || t.text.is_empty() {
            return vec![Base::Lost];
        }
        self.resolve(&t.text)
            .into_iter()
            .map(|p| match p {
                Place::Abs(n) => Base::Abs(n),
                Place::Inside(r) => Base::Rel(r),
                Place::Escapes | Place::Lost => Base::Lost,
            })
            .collect()
    }

    /// A script passed as one argument (`bash -c`, `env -S`, `flock -c`, `eval`).
    pub(super) fn nested_script(&mut self, arg: Option<&Expanded>, depth: usize, via: &str) {
        match arg {
            None => self.unknown(format!("{via} without a command")),
            Some(a) if a.downloads => self.dangerous(format!("download and execute: {via} runs downloaded text")),
            Some(a) if a.dynamic => self.unknown(format!("{via} runs a command computed at run time")),
            Some(a) => self.subshell(|s| s.script(&a.text, depth + 1)),
        }
    }
}
