//! The `airlock` command line: its arguments and what each command does.

use crate::agents::{self, ServerKey};
use crate::auth::{users as people, Password};
use crate::config::Config;
use crate::startup::Application;
use crate::{store, telemetry};
use clap::{Parser, Subcommand};
use std::io::BufRead;
use std::process::ExitCode;

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
#[allow(clippy::large_enum_variant)] // parsed once per run
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
    /// Answer an agent runtime's hook with Airlock's decision.
    Hook {
        #[command(subcommand)]
        command: HookCommand,
    },
    /// Gate an MCP server: serve MCP on stdin/stdout in front of the server the command
    /// after `--` starts; every tools/call goes to Airlock first (as mcp__SERVER__TOOL).
    McpProxy {
        /// Base URL of Airlock.
        #[arg(long, env = "AIRLOCK_URL", default_value = "http://127.0.0.1:3000")]
        url: String,
        /// The agent id the calls are proposed as.
        #[arg(long, env = "AIRLOCK_AGENT")]
        agent: String,
        /// A file holding the agent's whsec_ secret (else AIRLOCK_SECRET).
        #[arg(long)]
        secret_file: Option<std::path::PathBuf>,
        /// The MCP server's name in the policy (tools are mcp__SERVER__TOOL).
        #[arg(long)]
        server: String,
        /// The Airlock session of these calls (default: one per proxy run).
        #[arg(long)]
        session: Option<String>,
        /// Longest wait in seconds for a held call (default: until decided or expired).
        #[arg(long)]
        wait: Option<u64>,
        /// The MCP server's command and arguments.
        #[arg(last = true, required = true)]
        command: Vec<String>,
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
pub enum HookCommand {
    /// Claude Code's PreToolUse hook: reads the event (JSON) on stdin, proposes the call,
    /// prints the answer (allow, deny or ask). The agent's secret comes from AIRLOCK_SECRET
    /// or --secret-file. Fails closed: anything that goes wrong answers deny.
    ClaudeCode {
        /// Base URL of Airlock.
        #[arg(long, env = "AIRLOCK_URL", default_value = "http://127.0.0.1:3000")]
        url: String,
        /// The agent id the calls are proposed as.
        #[arg(long, env = "AIRLOCK_AGENT", default_value = "claude-code")]
        agent: String,
        /// A file holding the agent's whsec_ secret (else AIRLOCK_SECRET).
        #[arg(long)]
        secret_file: Option<std::path::PathBuf>,
        /// Seconds to wait for a reviewer when the call is held.
        #[arg(long, default_value_t = 30)]
        wait: u64,
        /// Still held after the wait: ask the person at the terminal (the call is withdrawn
        /// from the queue) or deny (it stays in the queue).
        #[arg(long, value_enum, default_value = "ask")]
        on_timeout: crate::hook::OnTimeout,
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
#[allow(clippy::large_enum_variant)] // parsed once per run
pub enum AuditCommand {
    /// Recompute the hash chain; non-zero exit and the first broken sequence number if
    /// any event was edited, inserted or deleted.
    Verify {
        /// Also require that the chain still reaches this head (`SEQ:HASH`, as printed by an
        /// earlier run), which finds events deleted from the end.
        #[arg(long)]
        expect_head: Option<String>,
        /// A checkpoint kept elsewhere (the JSON `airlock audit checkpoint` printed): its
        /// signature and the chain's hash at its event must match.
        #[arg(long)]
        checkpoint: Option<std::path::PathBuf>,
    },
    /// Sign the chain's head now and print the public key and the newest checkpoint as
    /// JSON, to keep somewhere this server cannot write.
    Checkpoint,
    /// Write the events a search finds as JSON Lines or CSV (all of them by default).
    Export {
        /// Free text over the redacted events.
        #[arg(long, default_value = "")]
        q: String,
        /// From: 2026-12-01, 2026-12-01T09:30, RFC 3339, or a span back from now (24h, 7d).
        #[arg(long, default_value = "")]
        since: String,
        #[arg(long, default_value = "")]
        until: String,
        #[arg(long, default_value = "")]
        agent: String,
        #[arg(long, default_value = "")]
        session: String,
        #[arg(long, default_value = "")]
        trace: String,
        #[arg(long, default_value = "")]
        tool: String,
        #[arg(long, default_value = "")]
        status: String,
        #[arg(long, default_value = "")]
        source: String,
        #[arg(long, default_value = "")]
        reviewer: String,
        #[arg(long, default_value = "")]
        kind: String,
        #[arg(long, default_value = "jsonl", value_parser = ["jsonl", "csv"])]
        format: String,
        /// Write here instead of standard output.
        #[arg(long)]
        output: Option<std::path::PathBuf>,
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
    /// Put a policy file in force: running servers switch to it within a second, without
    /// dropping a request, and the configured policy file is replaced with it. A file that
    /// does not compile changes nothing.
    Apply {
        file: String,
        /// Why (kept with the change).
        #[arg(long)]
        note: Option<String>,
    },
    /// What a proposed policy would have done to recorded calls: which decisions change,
    /// per tool, layer and rule, with examples. Reads only; asks the host nothing.
    Replay {
        file: String,
        /// From when: `7d`, `24h`, a date or RFC 3339 time.
        #[arg(long, default_value = "7d")]
        since: String,
        /// Only this agent's calls.
        #[arg(long, default_value = "")]
        agent: String,
        /// The report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The latest changes of the policy in force.
    History {
        #[arg(long, default_value_t = 20)]
        limit: i64,
    },
    /// What rules in shadow mode would have done to recorded calls, per rule.
    Shadow {
        /// How far back: `7d`, `24h`, a date or RFC 3339 time.
        #[arg(long, default_value = "7d")]
        since: String,
        /// Only this agent's calls.
        #[arg(long, default_value = "")]
        agent: String,
    },
}

/// Parse the command line and run it: the whole of the `airlock` binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // Policy commands need no configuration, database or runtime.
    if let Some(Command::Policy { command }) = &cli.command {
        let args: Vec<String> = match command {
            PolicyCommand::Check { file } => vec!["check".into(), file.clone()],
            PolicyCommand::Test { file, cases } => vec!["test".into(), file.clone(), cases.clone()],
            PolicyCommand::Shadow { .. }
            | PolicyCommand::Apply { .. }
            | PolicyCommand::History { .. }
            | PolicyCommand::Replay { .. } => Vec::new(),
        };
        if args.is_empty() {
            // Reads the database: runs below with the configuration.
        } else {
            let out = policy::cli::run(&args, &|path| std::fs::read_to_string(path).map_err(|e| e.to_string()));
            print!("{}", out.stdout);
            eprint!("{}", out.stderr);
            return ExitCode::from(out.code as u8);
        }
    }
    // The hook prints only its answer on stdout: no configuration, logging or database.
    if let Some(Command::Hook { command }) = cli.command {
        return hook(command);
    }
    // So does the MCP proxy: stdout is its MCP channel.
    if let Some(Command::McpProxy {
        url,
        agent,
        secret_file,
        server,
        session,
        wait,
        command,
    }) = cli.command
    {
        return mcp_proxy(url, agent, secret_file, server, session, wait, command);
    }
    let config = match Config::load() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("airlock: {e}");
            return ExitCode::from(2);
        }
    };
    telemetry::init(&config);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    match rt.block_on(run(cli.command.unwrap_or(Command::Serve), config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("airlock: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A checkpoint kept elsewhere: `{"public_key": HEX, "checkpoint": {...}}`.
fn read_checkpoint(
    path: &std::path::Path,
) -> Result<(ed25519_dalek::VerifyingKey, crate::audit::checkpoint::Checkpoint), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    crate::audit::checkpoint::Kept::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Who the audit trail names for CLI changes: the operating-system user.
fn cli_actor() -> String {
    format!("cli:{}", std::env::var("USER").unwrap_or_else(|_| "unknown".into()))
}

fn read_password(from_stdin: bool) -> Result<(Password, bool), String> {
    if from_stdin {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        Ok((Password::new(line.trim_end_matches(['\r', '\n'])), false))
    } else {
        Ok((Password::generate(), true))
    }
}

async fn run(command: Command, config: Config) -> Result<(), String> {
    match command {
        Command::Serve => serve(config).await,
        Command::Migrate => {
            let db = store::connect(&config.database_url).await?;
            store::migrate(&db).await?;
            println!("migrations applied");
            Ok(())
        }
        Command::User { command } => {
            let db = store::connect(&config.database_url).await?;
            store::migrate(&db).await?;
            let disable_flag = matches!(command, UserCommand::Disable { .. });
            match command {
                UserCommand::Add {
                    username,
                    role,
                    password_stdin,
                } => {
                    let (p, generated) = read_password(password_stdin)?;
                    let u = people::add(&db, &cli_actor(), &username, p.clone(), role.parse()?)
                        .await
                        .map_err(|e| e.to_string())?;
                    println!("added {} ({})", u.username, u.role);
                    if generated {
                        println!("password: {}", p.expose());
                    }
                }
                UserCommand::Passwd {
                    username,
                    password_stdin,
                } => {
                    let (p, generated) = read_password(password_stdin)?;
                    people::change_password(&db, &cli_actor(), &username, p.clone())
                        .await
                        .map_err(|e| e.to_string())?;
                    println!("password changed for {username}; their sessions have ended");
                    if generated {
                        println!("password: {}", p.expose());
                    }
                }
                UserCommand::Disable { username } | UserCommand::Enable { username } => {
                    let disable = disable_flag;
                    let u = people::find(&db, &username).await.map_err(|e| e.to_string())?;
                    people::set_disabled(&db, &cli_actor(), u.view.id, disable)
                        .await
                        .map_err(|e| e.to_string())?;
                    println!("{} {}", if disable { "disabled" } else { "enabled" }, u.view.username);
                }
            }
            db.close().await;
            Ok(())
        }
        Command::Policy {
            command: PolicyCommand::Shadow { since, agent },
        } => {
            let now = store::now_ms();
            let since_ms = crate::audit::search::parse_time(&since, now)?.unwrap_or(now - 7 * 86_400_000);
            let db = store::connect(&config.database_url).await?;
            store::migrate(&db).await?;
            let report = crate::shadow::report(&db, since_ms, &agent, now)
                .await
                .map_err(|e| format!("reading shadow findings: {e}"))?;
            print!("{}", crate::shadow::to_text(&report));
            Ok(())
        }
        Command::Policy {
            command: PolicyCommand::Apply { file, note },
        } => {
            let (policy, source) = compile_file(&file)
                .map_err(|e| e.replacen("does not compile", "does not compile; nothing changed", 1))?;
            let db = store::connect(&config.database_url).await?;
            store::migrate(&db).await?;
            let applied = crate::policies::apply_from_cli(
                &db,
                &config.policy_file,
                std::sync::Arc::new(policy),
                &source,
                &cli_actor(),
                note.as_deref(),
            )
            .await?;
            db.close().await;
            if applied.changed {
                println!(
                    "{} {} is in force (was {}).",
                    applied.name, applied.version, applied.previous
                );
                println!("Running servers switch to it within a second.");
            } else {
                println!("{} {} was already in force.", applied.name, applied.version);
            }
            Ok(())
        }
        Command::Policy {
            command:
                PolicyCommand::Replay {
                    file,
                    since,
                    agent,
                    json,
                },
        } => {
            let (policy, _) = compile_file(&file)?;
            let now = store::now_ms();
            let since_ms = crate::audit::search::parse_time(&since, now)?.unwrap_or(now - 7 * 86_400_000);
            let db = store::connect(&config.database_url).await?;
            store::migrate(&db).await?;
            let key = ServerKey::load_or_create(&config.key_file)?;
            let sealer = crate::store::sealed::Sealer::from_server_key(&key);
            let scope = crate::policies::replay::Scope {
                since_ms,
                until_ms: now,
                agent,
            };
            let report = crate::policies::replay::replay(&db, &sealer, &policy, &scope)
                .await
                .map_err(|e| format!("reading recorded calls: {e}"))?;
            db.close().await;
            if json {
                println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
            } else {
                print!("{}", crate::policies::replay::to_text(&report));
            }
            Ok(())
        }
        Command::Policy {
            command: PolicyCommand::History { limit },
        } => {
            let db = store::connect(&config.database_url).await?;
            store::migrate(&db).await?;
            let changes = store::policies::changes(&db, limit.clamp(1, 1000))
                .await
                .map_err(|e| format!("reading policy changes: {e}"))?;
            for c in changes {
                println!(
                    "{}  {:<8} {:<24} {} {}{}",
                    crate::audit::search::rfc3339(c.at_ms),
                    c.via,
                    c.actor,
                    c.name.as_deref().unwrap_or("?"),
                    c.version,
                    c.note.map(|n| format!("  ({n})")).unwrap_or_default()
                );
            }
            db.close().await;
            Ok(())
        }
        Command::Policy { .. } => unreachable!("handled before the runtime starts"),
        Command::Hook { .. } | Command::McpProxy { .. } => unreachable!("handled before the configuration is read"),
        Command::Agent { command } => {
            let db = store::connect(&config.database_url).await?;
            store::migrate(&db).await?;
            let key = ServerKey::load_or_create(&config.key_file)?;
            let by = cli_actor();
            match command {
                AgentCommand::Add { id, description } => {
                    let secret = agents::add(&db, &key, &id, &description, &by)
                        .await
                        .map_err(|e| e.to_string())?;
                    println!("added agent {id}");
                    println!("signing secret (shown once; store it in the agent's secret store):");
                    println!("{}", secret.reveal());
                }
                AgentCommand::Rotate { id, grace_seconds } => {
                    let secret = agents::rotate(&db, &key, &id, grace_seconds, &by)
                        .await
                        .map_err(|e| e.to_string())?;
                    println!("new signing secret for {id}; the previous one stays valid for {grace_seconds} s:");
                    println!("{}", secret.reveal());
                }
                AgentCommand::Disable { id } => {
                    agents::set_disabled(&db, &id, true, &by)
                        .await
                        .map_err(|e| e.to_string())?;
                    println!("disabled agent {id}");
                }
                AgentCommand::Enable { id } => {
                    agents::set_disabled(&db, &id, false, &by)
                        .await
                        .map_err(|e| e.to_string())?;
                    println!("enabled agent {id}");
                }
                AgentCommand::List => {
                    for (id, description, disabled, created) in
                        store::agents::list(&db).await.map_err(|e| e.to_string())?
                    {
                        let state = if disabled { "disabled" } else { "active" };
                        let since = crate::ingest::view::rfc3339(created);
                        println!("{id}\t{state}\t{since}\t{description}");
                    }
                }
            }
            db.close().await;
            Ok(())
        }
        Command::Audit {
            command: AuditCommand::Verify {
                expect_head,
                checkpoint,
            },
        } => {
            let db = store::connect(&config.database_url).await?;
            store::migrate(&db).await?;
            let signer =
                crate::audit::checkpoint::Signer::from_server_key(&ServerKey::load_or_create(&config.key_file)?);
            let mut trusted = vec![signer.public_key()];
            let mut extra = Vec::new();
            if let Some(path) = checkpoint {
                let (key, cp) = read_checkpoint(&path)?;
                trusted.push(key);
                extra.push(cp);
            }
            let check = crate::audit::checkpoint::check(&db, &trusted, &extra)
                .await
                .map_err(|e| e.to_string())?;
            let v = crate::audit::verify(&db).await.map_err(|e| e.to_string())?;
            db.close().await;
            if let Some((seq, why)) = check.problem {
                return Err(format!(
                    "audit chain broken at event {seq}: {why} ({} events before it verified)",
                    (seq - 1).max(0)
                ));
            }
            if let Some(expected) = expect_head {
                let (seq, hash) = expected.split_once(':').ok_or("--expect-head takes SEQ:HASH")?;
                let seq: i64 = seq.parse().map_err(|_| "--expect-head: SEQ must be a number")?;
                let found = crate::audit::hash_at(&config.database_url, seq).await?;
                if found.as_deref() != Some(hash) {
                    return Err(format!(
                        "audit chain no longer holds event {seq} with the expected hash: events were removed"
                    ));
                }
            }
            println!(
                "audit chain verified: {} events, {} signed checkpoints",
                v.events, check.checkpoints
            );
            println!("head: {}:{}", v.head.seq, v.head.hash);
            Ok(())
        }
        Command::Audit {
            command: AuditCommand::Checkpoint,
        } => {
            let db = store::connect(&config.database_url).await?;
            store::migrate(&db).await?;
            let signer =
                crate::audit::checkpoint::Signer::from_server_key(&ServerKey::load_or_create(&config.key_file)?);
            crate::audit::checkpoint::sign_head(&db, &signer)
                .await
                .map_err(|e| e.to_string())?;
            let latest = crate::audit::checkpoint::latest(&db).await.map_err(|e| e.to_string())?;
            db.close().await;
            let out = crate::audit::checkpoint::Kept::new(&signer, latest);
            println!("{}", serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?);
            Ok(())
        }
        Command::Audit {
            command:
                AuditCommand::Export {
                    q,
                    since,
                    until,
                    agent,
                    session,
                    trace,
                    tool,
                    status,
                    source,
                    reviewer,
                    kind,
                    format,
                    output,
                },
        } => {
            use futures::StreamExt;
            use std::io::Write;
            let query = app::api::AuditQuery {
                q,
                since,
                until,
                agent,
                session,
                trace,
                tool,
                status,
                source,
                reviewer,
                kind,
                sort: "oldest".into(),
                ..Default::default()
            };
            let plan = crate::audit::search::plan(&query, store::now_ms())?;
            let format = crate::audit::export::Format::parse(&format)?;
            let db = store::connect(&config.database_url).await?;
            store::migrate(&db).await?;
            let index =
                crate::audit::index::SearchIndex::open(&crate::audit::index::path_for(&config)?, db.clone()).await?;
            index
                .catch_up()
                .await
                .map_err(|e| format!("indexing the audit trail: {e}"))?;
            let mut out: Box<dyn Write> = match &output {
                Some(p) => Box::new(std::io::BufWriter::new(
                    std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?,
                )),
                None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
            };
            let mut chunks = std::pin::pin!(crate::audit::export::stream(index.clone(), plan, format));
            while let Some(chunk) = chunks.next().await {
                out.write_all(&chunk.map_err(|e| e.to_string())?)
                    .map_err(|e| e.to_string())?;
            }
            out.flush().map_err(|e| e.to_string())?;
            index.close().await;
            db.close().await;
            Ok(())
        }
        Command::DemoAgent { url, agent, wait } => {
            let db = store::connect(&config.database_url).await?;
            store::migrate(&db).await?;
            let key = ServerKey::load_or_create(&config.key_file)?;
            let by = cli_actor();
            // The demo agent is created on first use; later runs rotate its secret.
            let secret = match agents::add(&db, &key, &agent, "scripted demo agent", &by).await {
                Ok(s) => s,
                Err(agents::AgentError::Exists(_)) => {
                    agents::set_disabled(&db, &agent, false, &by)
                        .await
                        .map_err(|e| e.to_string())?;
                    agents::rotate(&db, &key, &agent, 0, &by)
                        .await
                        .map_err(|e| e.to_string())?
                }
                Err(e) => return Err(e.to_string()),
            };
            db.close().await;
            let report = crate::demo_agent::run(&url, &agent, &secret, std::time::Duration::from_secs(wait), |line| {
                println!("{line}")
            })
            .await?;
            println!("{}", report.summary());
            Ok(())
        }
    }
}

async fn serve(config: Config) -> Result<(), String> {
    let app = Application::build(config).await?;
    if let Some((name, password)) = &app.first_admin {
        // Printed once, to the terminal only (never to the log).
        println!();
        println!("  First administrator created. Sign in and keep this password safe;");
        println!("  it is not shown again (reset with `airlock user passwd {name}`).");
        println!("    username: {name}");
        println!("    password: {}", password.expose());
        println!();
    }
    let addr = app.local_addr();
    tracing::info!(%addr, "Airlock is listening on http://{addr}");
    app.run_until_stopped(shutdown_signal()).await
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

/// `airlock hook …`: one answer on stdout, exit 0 (Claude Code reads a deny from the JSON);
/// exit 2 only when the hook itself is misconfigured, which Claude Code also treats as a
/// refusal, with the message on stderr.
fn hook(command: HookCommand) -> ExitCode {
    let HookCommand::ClaudeCode {
        url,
        agent,
        secret_file,
        wait,
        on_timeout,
    } = command;
    let secret = match agent_secret(secret_file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("airlock hook: the agent's secret: {e}");
            return ExitCode::from(2);
        }
    };
    use std::io::Read as _;
    let mut input = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(crate::hook::MAX_EVENT_BYTES as u64 + 1)
        .read_to_end(&mut input);
    let settings = crate::hook::Settings {
        url,
        agent,
        secret,
        wait: std::time::Duration::from_secs(wait),
        on_timeout,
    };
    let answer = match read {
        Err(e) => crate::hook::answer(
            "deny",
            &format!("Airlock: the hook event could not be read ({e})"),
            None,
        ),
        Ok(_) => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("tokio runtime");
            rt.block_on(crate::hook::run(&settings, &input))
        }
    };
    println!("{answer}");
    ExitCode::SUCCESS
}

/// The secret of the agent an integration proposes as: `--secret-file`, else AIRLOCK_SECRET.
fn agent_secret(file: Option<std::path::PathBuf>) -> Result<agents::SigningSecret, String> {
    match file {
        Some(path) => std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display())),
        None => std::env::var("AIRLOCK_SECRET").map_err(|_| "set AIRLOCK_SECRET or --secret-file".to_string()),
    }
    .and_then(|s| agents::SigningSecret::parse(&s))
}

/// `airlock mcp-proxy`: errors on stderr, exit 1 when the proxy cannot run.
fn mcp_proxy(
    url: String,
    agent: String,
    secret_file: Option<std::path::PathBuf>,
    server: String,
    session: Option<String>,
    wait: Option<u64>,
    command: Vec<String>,
) -> ExitCode {
    let fail = |e: String| {
        eprintln!("airlock mcp-proxy: {e}");
        ExitCode::FAILURE
    };
    let secret = match agent_secret(secret_file) {
        Ok(s) => s,
        Err(e) => return fail(format!("the agent's secret: {e}")),
    };
    if !crate::mcp_proxy::valid_server_name(&server) {
        return fail(format!(
            "--server {server:?}: use a-z, 0-9, '_', '-' and '.', as the policy spells it"
        ));
    }
    let settings = crate::mcp_proxy::Settings {
        url,
        agent,
        secret,
        server,
        session: session.unwrap_or_else(|| format!("mcp-{}", &uuid::Uuid::new_v4().simple().to_string()[..12])),
        wait: wait.map(std::time::Duration::from_secs),
        command,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    match rt.block_on(crate::mcp_proxy::run(settings)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

/// A policy file read and compiled, with its text; or every problem, one a line.
fn compile_file(file: &str) -> Result<(policy::Policy, String), String> {
    let source = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let policy = crate::policies::compile(&source).map_err(|problems| {
        let lines: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
        format!("{file} does not compile:\n{}", lines.join("\n"))
    })?;
    Ok((policy, source))
}
