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
    /// Manage agents (programs that propose tool calls).
    Agent {
        #[command(subcommand)]
        command: AgentCommand,
    },
    /// Check the audit trail.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Send a scripted agent session to a running server (creates the agent if needed).
    DemoAgent {
        /// Base URL of the running server.
        #[arg(long, default_value = "http://127.0.0.1:3000")]
        url: String,
        /// Agent id to use; created on first use, its secret rotated on later runs.
        #[arg(long, default_value = "demo-agent")]
        agent: String,
        /// Seconds to wait for reviewers to decide the held calls.
        #[arg(long, default_value_t = 60)]
        wait: u64,
    },
}

#[derive(Subcommand, Debug)]
pub enum AgentCommand {
    /// Add an agent and print its id and signing secret (shown once).
    Add {
        id: String,
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Issue a new secret; the old one stays valid for --grace-seconds.
    Rotate {
        id: String,
        #[arg(long, default_value_t = 86_400)]
        grace_seconds: i64,
    },
    /// Refuse the agent's requests from now on.
    Disable { id: String },
    /// Accept the agent's requests again.
    Enable { id: String },
    /// List agents.
    List,
}

#[derive(Subcommand, Debug)]
pub enum AuditCommand {
    /// Recompute the hash chain; non-zero exit and the first broken sequence number if
    /// any event was edited, inserted or deleted.
    Verify {
        /// Also require that the chain still reaches this head (`SEQ:HASH`, as printed by an
        /// earlier run), which finds events deleted from the end.
        #[arg(long)]
        expect_head: Option<String>,
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
