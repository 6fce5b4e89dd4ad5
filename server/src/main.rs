use clap::Parser;
use server::auth::{users as people, Password};
use server::cli::{Cli, Command, PolicyCommand, UserCommand};
use server::config::Config;
use server::startup::Application;
use server::{store, telemetry};
use std::io::BufRead;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Policy commands need no configuration, database or runtime.
    if let Some(Command::Policy { command }) = &cli.command {
        let args: Vec<String> = match command {
            PolicyCommand::Check { file } => vec!["check".into(), file.clone()],
            PolicyCommand::Test { file, cases } => vec!["test".into(), file.clone(), cases.clone()],
        };
        let out = policy::cli::run(&args);
        print!("{}", out.stdout);
        eprint!("{}", out.stderr);
        return ExitCode::from(out.code as u8);
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
                    let u = people::add(&db, &username, p.clone(), role.parse()?)
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
                    people::change_password(&db, &username, p.clone())
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
                    people::set_disabled(&db, u.view.id, disable)
                        .await
                        .map_err(|e| e.to_string())?;
                    println!("{} {}", if disable { "disabled" } else { "enabled" }, u.view.username);
                }
            }
            db.close().await;
            Ok(())
        }
        Command::Policy { .. } => unreachable!("handled before the runtime starts"),
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
