//! The server's integration tests, through real HTTP on loopback and a real SQLite file:
//! one test binary (one link of the server) with the shared harness in `common`.

mod common;

mod agent_api;
mod agents_admin;
mod audit;
mod cli;
mod cluster;
mod crash;
mod first_hour;
mod foundation;
mod hook;
mod i18n;
mod integrity;
mod mcp_proxy;
mod metrics;
mod migrations;
mod notify;
mod oncall;
mod policy_lifecycle;
mod review;
mod shadow;
mod stats;
