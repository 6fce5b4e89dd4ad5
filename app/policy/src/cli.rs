//! `policy check FILE` and `policy test FILE CASES`: the policy author's tools.
//!
//! Run by the `airlock` binary (`airlock policy …`). Pure like the rest of this crate: the
//! caller passes how to read a file, and gets back the text to print and the exit code.

use crate::{cases, Policy};

pub const USAGE: &str = "usage:\n  policy check FILE          validate a policy file and print its version\n  policy test FILE CASES     run example calls against it (non-zero exit on a mismatch)";

/// Output of one command: what to print on stdout / stderr and the exit code.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

fn fail(stderr: String, code: i32) -> Outcome {
    Outcome {
        stdout: String::new(),
        stderr,
        code,
    }
}

/// Reads a named file (the caller's filesystem; tests pass a map).
pub type Read<'a> = &'a dyn Fn(&str) -> Result<String, String>;

fn load(read: Read<'_>, path: &str) -> Result<Policy, Outcome> {
    let src = read(path).map_err(|e| fail(format!("{path}: {e}\n"), 2))?;
    Policy::from_toml(&src).map_err(|errs| fail(format!("{path}: {} error(s)\n{errs}\n", errs.0.len()), 1))
}

/// Run `args` (without the leading `policy`).
pub fn run(args: &[String], read: Read<'_>) -> Outcome {
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["check", file] => match load(read, file) {
            Ok(p) => Outcome {
                stdout: format!(
                    "{file}: ok\npolicy  {}\nversion {}\ntools   {}\n",
                    p.name,
                    p.version,
                    p.tool_names().join(", ")
                ),
                stderr: String::new(),
                code: 0,
            },
            Err(o) => o,
        },
        ["test", file, cases_path] => {
            let p = match load(read, file) {
                Ok(p) => p,
                Err(o) => return o,
            };
            let src = match read(cases_path) {
                Ok(s) => s,
                Err(e) => return fail(format!("{cases_path}: {e}\n"), 2),
            };
            match cases::run(&p, &src) {
                Ok(report) => Outcome {
                    stdout: report.render(),
                    stderr: String::new(),
                    code: if report.failed() == 0 { 0 } else { 1 },
                },
                Err(e) => fail(format!("{cases_path}: {e}\n"), 2),
            }
        }
        _ => fail(format!("{USAGE}\n"), 2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    const DEMO: &str = include_str!("../../../policies/demo.toml");
    const CASES: &str = include_str!("../../../policies/demo.cases.toml");

    /// A file system of a few named texts.
    fn files(list: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Result<String, String> {
        move |name: &str| {
            list.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, text)| text.to_string())
                .ok_or_else(|| "No such file or directory".to_string())
        }
    }

    #[test]
    fn check_prints_the_version_of_the_demo_policy() {
        let o = run(&args(&["check", "demo.toml"]), &files(&[("demo.toml", DEMO)]));
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert!(o.stdout.contains("version sha256:"), "{}", o.stdout);
    }

    #[test]
    fn check_reports_errors_with_their_location() {
        const BAD: &str = "[policy]\nname = \"x\"\n[tools.a]\narguments = { type = \"object\" }\naproval = \"ask\"\n";
        let o = run(&args(&["check", "bad.toml"]), &files(&[("bad.toml", BAD)]));
        assert_eq!(o.code, 1);
        assert!(o.stderr.contains("aproval"), "{}", o.stderr);
        assert!(o.stderr.contains("line 5"), "{}", o.stderr);
    }

    #[test]
    fn test_passes_on_the_demo_cases_and_fails_on_a_wrong_expectation() {
        const WRONG: &str =
            "[[case]]\nname = \"wrong\"\ntool = \"web_search\"\narguments = { query = \"x\" }\nexpect = \"denied\"\n";
        let fs = files(&[("demo.toml", DEMO), ("cases.toml", CASES), ("wrong.toml", WRONG)]);
        let o = run(&args(&["test", "demo.toml", "cases.toml"]), &fs);
        assert_eq!(o.code, 0, "{}", o.stdout);
        let o = run(&args(&["test", "demo.toml", "wrong.toml"]), &fs);
        assert_eq!(o.code, 1);
        assert!(o.stdout.contains("FAIL"), "{}", o.stdout);
    }

    #[test]
    fn missing_files_and_bad_usage_exit_2() {
        let fs = files(&[]);
        let o = run(&args(&["check", "/nonexistent.toml"]), &fs);
        assert_eq!(o.code, 2);
        assert!(o.stderr.contains("/nonexistent.toml: No such file"), "{}", o.stderr);
        assert_eq!(run(&args(&["frobnicate"]), &fs).code, 2);
        assert_eq!(run(&args(&[]), &fs).code, 2);
    }
}
