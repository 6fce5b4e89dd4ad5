//! People and sign-in: passwords, sessions, CSRF, throttling.

pub mod csrf;
pub mod login;
pub mod password;
pub mod session;
pub mod throttle;
pub mod users;

pub use password::Password;
