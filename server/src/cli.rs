//! The `airlock` command line.

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "airlock",
    version,
    about = "Approval gateway and audit dashboard for AI-agent tool calls"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the server (the default).
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Manage dashboard users.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Check and test policy files.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
}

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Add a user. Prints a generated password unless --password-stdin is given.
    Add {
        username: String,
        #[arg(long, default_value = "reviewer", value_parser = ["admin", "reviewer", "oncall", "auditor"])]
        role: String,
        /// Read the password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Set a new password (generated and printed unless --password-stdin). Signs the user out.
    Passwd {
        username: String,
        #[arg(long)]
        password_stdin: bool,
    },
    /// Disable a user: they can no longer sign in and open sessions end.
    Disable { username: String },
    /// Enable a disabled user again.
    Enable { username: String },
}

#[derive(Subcommand, Debug)]
pub enum PolicyCommand {
    /// Validate a policy file and print its version.
    Check { file: String },
    /// Run example calls against a policy (non-zero exit on a mismatch).
    Test { file: String, cases: String },
}
