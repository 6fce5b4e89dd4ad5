//! Fuzz the entry point an agent reaches: strict JSON parsing, then evaluation of the
//! demo policy with the guards, budgets and rules. Run from app/policy:
//!
//!     cargo +nightly fuzz run evaluate
//!
//! Input layout: `tool\ncontext-json\narguments-json` (missing parts are empty).
#![no_main]

use libfuzzer_sys::fuzz_target;
use policy::{parse_strict, Call, Inputs, JsonLimits, MemoryUsage, Policy, PureHost, Status};
use std::sync::OnceLock;

static POLICY: OnceLock<Policy> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let policy = POLICY.get_or_init(|| Policy::from_toml(include_str!("../../../../policies/demo.toml")).unwrap());
    let mut parts = data.splitn(3, |b| *b == b'\n');
    let tool = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let context = parts.next().and_then(|c| parse_strict(c, JsonLimits::default()).ok()).unwrap_or_default();
    let Ok(args) = parse_strict(parts.next().unwrap_or_default(), JsonLimits::default()) else {
        return;
    };
    let mut usage = MemoryUsage::default();
    for turn in 0..3 {
        let call = Call {
            agent: "fuzz",
            tool: &tool,
            server: Some("chrome-devtools"),
            session_id: "fuzz",
            turn_id: Some(if turn < 2 { "t" } else { "u" }),
            arguments: &args,
            context: &context,
        };
        let d = policy.evaluate(&call, &Inputs { now_ms: 1_767_225_600_000, usage: &usage, grants: &[], host: &PureHost });
        // Invariants: a denial names its layer; an allowed call passed the checks a
        // reviewer's modification would be re-validated with.
        if d.status == Status::Denied {
            assert!(d.blocked_by.is_some());
        }
        if d.status == Status::Allowed {
            assert!(policy.check_arguments(&call, &PureHost).is_ok());
        }
        usage.apply(&d.usage);
    }
});
