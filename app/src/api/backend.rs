//! What server functions need from the server, as a trait so this crate does not depend
//! on the server (which depends on it). The server provides an `Arc<dyn Backend>` in the
//! Leptos context of every request.

use super::{Role, UserView};
use std::sync::Arc;

/// An error a person may read. Internal failures carry no detail: the server logs them.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum BackendError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Conflict(String),
    #[error("not found")]
    NotFound,
    #[error("something went wrong on the server (reference {0})")]
    Internal(String),
}

#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    async fn list_users(&self) -> Result<Vec<UserView>, BackendError>;
    async fn add_user(
        &self,
        actor: &UserView,
        username: &str,
        password: &str,
        role: Role,
    ) -> Result<UserView, BackendError>;
    async fn set_role(&self, actor: &UserView, user_id: i64, role: Role) -> Result<(), BackendError>;
    async fn set_disabled(&self, actor: &UserView, user_id: i64, disabled: bool) -> Result<(), BackendError>;
}

pub type SharedBackend = Arc<dyn Backend>;
