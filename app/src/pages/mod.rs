pub mod admin;
pub mod audit;
pub mod home;
pub mod login;
pub mod not_found;
pub mod queue;
pub mod stats;
