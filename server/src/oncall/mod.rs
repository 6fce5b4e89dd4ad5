//! On-call: break-glass overrides (time-boxed, announced to everyone), the post-hoc
//! review of every call released under one, and escalation of calls nobody answers.
//!
//! What each writes runs in the ledger (plain functions over [`crate::ledger::Tx`]), so
//! an override and the end of its break-glass are ordered: nothing is released after the
//! time is up, even by a request sent a moment before.

pub mod break_glass;
pub mod escalation;
pub mod overrides;

/// Shortest justification accepted: a few words, not "x".
pub const MIN_JUSTIFICATION_CHARS: usize = 10;
