//! Real-time updates: the in-process event hub and its SSE endpoint.

pub mod hub;
pub mod sse;

pub use hub::{Event, Hub};
