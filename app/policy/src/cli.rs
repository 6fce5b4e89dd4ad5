//! `policy check FILE` and `policy test FILE CASES`: the policy author's tools.
//!
//! Shared by the `airlock` server binary (`airlock policy …`) and this crate's small
//! `policy` binary. Returns the text to print and the process exit code, so callers and
//! tests need no process.

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

fn load(path: &str) -> Result<Policy, Outcome> {
    let src = std::fs::read_to_string(path).map_err(|e| fail(format!("{path}: {e}\n"), 2))?;
    Policy::from_toml(&src).map_err(|errs| fail(format!("{path}: {} error(s)\n{errs}\n", errs.0.len()), 1))
}

/// Run `args` (without the leading `policy`).
pub fn run(args: &[String]) -> Outcome {
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["check", file] => match load(file) {
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
            let p = match load(file) {
                Ok(p) => p,
                Err(o) => return o,
            };
            let src = match std::fs::read_to_string(cases_path) {
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

    const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../policies/demo.toml");
    const CASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../policies/demo.cases.toml");

    #[test]
    fn check_prints_the_version_of_the_demo_policy() {
        let o = run(&args(&["check", DEMO]));
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert!(o.stdout.contains("version sha256:"), "{}", o.stdout);
    }

    #[test]
    fn check_reports_errors_with_their_location() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bad.toml");
        std::fs::write(
            &f,
            "[policy]\nname = \"x\"\n[tools.a]\narguments = { type = \"object\" }\naproval = \"ask\"\n",
        )
        .unwrap();
        let o = run(&args(&["check", f.to_str().unwrap()]));
        assert_eq!(o.code, 1);
        assert!(o.stderr.contains("aproval"), "{}", o.stderr);
        assert!(o.stderr.contains("line 5"), "{}", o.stderr);
    }

    #[test]
    fn test_passes_on_the_demo_cases_and_fails_on_a_wrong_expectation() {
        let o = run(&args(&["test", DEMO, CASES]));
        assert_eq!(o.code, 0, "{}", o.stdout);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("cases.toml");
        std::fs::write(
            &f,
            "[[case]]\nname = \"wrong\"\ntool = \"web_search\"\narguments = { query = \"x\" }\nexpect = \"denied\"\n",
        )
        .unwrap();
        let o = run(&args(&["test", DEMO, f.to_str().unwrap()]));
        assert_eq!(o.code, 1);
        assert!(o.stdout.contains("FAIL"), "{}", o.stdout);
    }

    #[test]
    fn missing_files_and_bad_usage_exit_2() {
        assert_eq!(run(&args(&["check", "/nonexistent.toml"])).code, 2);
        assert_eq!(run(&args(&["frobnicate"])).code, 2);
        assert_eq!(run(&args(&[])).code, 2);
    }
}
