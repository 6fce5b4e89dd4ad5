//! Airlock's policy engine.
//!
//! Pure Rust with no I/O and no async runtime: a [`Policy`] is loaded once from TOML
//! ([`Policy::from_toml`]) and then decides calls with [`Policy::evaluate`]. Layers run
//! in a fixed order and the first that objects is named in `blocked_by`:
//! allowlist → schema → path / command / URL guards → budgets → approval rules →
//! approve-all grants. Facts from the outside world (time, budget usage, grants, the
//! host's filesystem) are passed in by the caller through [`Inputs`].
//!
//! [`redact`] is the one redaction function for everything stored or shown;
//! [`json::parse_strict`] is the one JSON parser for everything an agent sends.

pub mod budget;
pub mod cases;
pub mod cli;
pub mod config;
pub mod decision;
pub mod engine;
pub mod expr;
pub mod guards;
pub mod host;
pub mod json;
pub mod load;
pub mod name;
pub mod redact;

pub use budget::{MemoryUsage, NoUsage, Usage};
pub use config::Risk;
pub use decision::{
    Call, Decision, Grant, GrantScope, Impact, Layer, Pinned, ShadowFinding, Source, Status, UsageChange, UsageDelta,
};
pub use engine::{Inputs, Policy, Reevaluated, Refusal, ToolInfo};
pub use host::{Host, PureHost, TreeStats};
pub use json::{parse_strict, JsonError, JsonLimits};
pub use load::{LoadError, LoadErrors};
