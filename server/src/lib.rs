//! Airlock's server: configuration, HTTP, database, sign-in and the real-time hub.

pub mod auth;
pub mod backend;
pub mod cli;
pub mod config;
pub mod error;
pub mod realtime;
pub mod startup;
pub mod store;
pub mod telemetry;
pub mod web;
