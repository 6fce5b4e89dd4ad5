//! HTTP plumbing that is not a feature of its own: static assets, security headers, health.

pub mod assets;
pub mod headers;
pub mod health;
