//! Airlock's server: configuration, HTTP, database, sign-in and the real-time hub.

pub mod agents;
pub mod audit;
pub mod auth;
pub mod backend;
pub mod callbacks;
pub mod cli;
pub mod config;
pub mod demo_agent;
pub mod error;
pub mod expiry;
pub mod host;
pub mod ingest;
pub mod ledger;
pub mod metrics;
pub mod notify;
pub mod oncall;
pub mod realtime;
pub mod retention;
pub mod review;
pub mod shadow;
pub mod startup;
pub mod state;
pub mod stats;
pub mod store;
pub mod telemetry;
pub mod web;
