//! Real-time updates: the in-process event hub and its SSE endpoint.

pub mod cluster;
pub mod hub;
pub mod sse;
pub mod waiters;

pub use hub::{Event, Hub};
