//! HTTP plumbing that is not a feature of its own: security headers, health.

pub mod headers;
pub mod health;
