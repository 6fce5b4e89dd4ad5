//! The `airlock` binary's commands, run as a user would run them.

use crate::common::{airlock, text};
use std::process::{Command, Output};

#[tokio::test]
async fn user_add_passwd_disable_enable() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/a.db", dir.path().display());

    let o = airlock(&db, &["user", "add", "ana", "--role", "auditor"], None);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("added ana (auditor)"), "{out}");
    let generated = out
        .lines()
        .find_map(|l| l.strip_prefix("password: "))
        .unwrap()
        .to_string();
    assert_eq!(generated.len(), 20);

    let o = airlock(&db, &["user", "add", "ana"], None);
    assert!(!o.status.success(), "duplicate names are refused");
    assert!(text(&o).contains("already exists"), "{}", text(&o));

    let o = airlock(
        &db,
        &["user", "add", "bo", "--role", "reviewer", "--password-stdin"],
        Some("short\n"),
    );
    assert!(!o.status.success());
    assert!(text(&o).contains("at least 12 characters"), "{}", text(&o));

    let o = airlock(
        &db,
        &["user", "passwd", "ana", "--password-stdin"],
        Some("a brand new password\n"),
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = airlock(&db, &["user", "disable", "ana"], None);
    assert!(o.status.success(), "{}", text(&o));
    let o = airlock(&db, &["user", "disable", "nobody"], None);
    assert!(!o.status.success());
    assert!(text(&o).contains("no such user"));

    let pool = server::store::connect(&secrecy::SecretString::from(db.clone()))
        .await
        .unwrap();
    let u = server::store::users::by_username(&pool, "ana").await.unwrap().unwrap();
    assert!(u.view.disabled);
    assert!(
        server::auth::password::verify(
            server::auth::Password::new("a brand new password"),
            Some(u.password_hash)
        )
        .await
    );
    pool.close().await;

    let o = airlock(&db, &["user", "enable", "ana"], None);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn policy_check_and_test_on_the_demo_policy() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let demo = root.join("policies/demo.toml");
    let cases = root.join("policies/demo.cases.toml");
    let o = airlock("sqlite::memory:", &["policy", "check", demo.to_str().unwrap()], None);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("version sha256:"));
    let o = airlock(
        "sqlite::memory:",
        &["policy", "test", demo.to_str().unwrap(), cases.to_str().unwrap()],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains(" passed, 0 failed"), "{}", text(&o));
    let o = airlock("sqlite::memory:", &["policy", "check", "/nonexistent.toml"], None);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_broken_policy_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[policy]\nname = \"x\"\n[tools.a]\naproval = \"ask\"\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .arg("serve")
        .env(
            "AIRLOCK_DATABASE_URL",
            format!("sqlite://{}/a.db", dir.path().display()),
        )
        .env("AIRLOCK_POLICY_FILE", &bad)
        .env("AIRLOCK_BIND", "127.0.0.1:0")
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(text(&o).contains("aproval"), "{}", text(&o));
}

#[test]
fn a_database_that_cannot_be_migrated_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-db.db");
    std::fs::write(&file, vec![b'x'; 4096]).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .arg("serve")
        .env("AIRLOCK_DATABASE_URL", format!("sqlite://{}", file.display()))
        .env("AIRLOCK_BIND", "127.0.0.1:0")
        .current_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap())
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        text(&o).contains("database") || text(&o).contains("migrations"),
        "{}",
        text(&o)
    );
}

fn airlock_with_key(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(args)
        .current_dir(dir)
        .env("AIRLOCK_DATABASE_URL", format!("sqlite://{}/a.db", dir.display()))
        .env("AIRLOCK_KEY_FILE", dir.join("a.key"))
        .env("AIRLOCK_LOG_LEVEL", "warn")
        .output()
        .unwrap()
}

#[tokio::test]
async fn agent_add_shows_the_secret_once_and_list_disable_enable_work() {
    let dir = tempfile::tempdir().unwrap();
    let o = airlock_with_key(
        dir.path(),
        &["agent", "add", "support-bot", "--description", "helpdesk"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    let secret = out.lines().find(|l| l.starts_with("whsec_")).expect("secret printed");
    assert!(server::agents::SigningSecret::parse(secret).is_ok());
    let dup = airlock_with_key(dir.path(), &["agent", "add", "support-bot"]);
    assert!(!dup.status.success());
    assert!(text(&dup).contains("already exists"));
    let bad = airlock_with_key(dir.path(), &["agent", "add", "Bad Name"]);
    assert!(!bad.status.success());

    assert!(airlock_with_key(dir.path(), &["agent", "disable", "support-bot"])
        .status
        .success());
    let list = text(&airlock_with_key(dir.path(), &["agent", "list"]));
    assert!(list.contains("support-bot\tdisabled"), "{list}");
    assert!(!list.contains("whsec_"), "listing never shows secrets");
    assert!(airlock_with_key(dir.path(), &["agent", "enable", "support-bot"])
        .status
        .success());
    let rotated = text(&airlock_with_key(dir.path(), &["agent", "rotate", "support-bot"]));
    let new = rotated.lines().find(|l| l.starts_with("whsec_")).expect("new secret");
    assert_ne!(new, secret);
}

#[tokio::test]
async fn audit_verify_names_the_first_tampered_event() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a1", "a2", "a3"] {
        assert!(airlock_with_key(dir.path(), &["agent", "add", name]).status.success());
    }
    let ok = airlock_with_key(dir.path(), &["audit", "verify"]);
    assert!(ok.status.success(), "{}", text(&ok));
    let out = text(&ok);
    assert!(out.contains("3 events"), "{out}");
    let head = out.lines().find_map(|l| l.strip_prefix("head: ")).unwrap().to_string();
    assert!(
        airlock_with_key(dir.path(), &["audit", "verify", "--expect-head", &head])
            .status
            .success()
    );

    let db = server::store::connect(&format!("sqlite://{}/a.db", dir.path().display()).into())
        .await
        .unwrap();
    sqlx::query("DROP TRIGGER audit_events_no_update")
        .execute(&db)
        .await
        .unwrap();
    sqlx::query("UPDATE audit_events SET actor = 'cli:someone-else' WHERE seq = 2")
        .execute(&db)
        .await
        .unwrap();
    db.close().await;
    let bad = airlock_with_key(dir.path(), &["audit", "verify"]);
    assert!(!bad.status.success());
    assert!(text(&bad).contains("broken at event 2"), "{}", text(&bad));
}

#[tokio::test]
async fn audit_verify_with_an_expected_head_finds_events_removed_from_the_end() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a1", "a2"] {
        assert!(airlock_with_key(dir.path(), &["agent", "add", name]).status.success());
    }
    let out = text(&airlock_with_key(dir.path(), &["audit", "verify"]));
    let head = out.lines().find_map(|l| l.strip_prefix("head: ")).unwrap().to_string();
    let db = server::store::connect(&format!("sqlite://{}/a.db", dir.path().display()).into())
        .await
        .unwrap();
    sqlx::query("DROP TRIGGER audit_events_no_delete")
        .execute(&db)
        .await
        .unwrap();
    sqlx::query("DELETE FROM audit_events WHERE seq = 2")
        .execute(&db)
        .await
        .unwrap();
    db.close().await;
    assert!(
        airlock_with_key(dir.path(), &["audit", "verify"]).status.success(),
        "a truncated chain is still a chain"
    );
    let bad = airlock_with_key(dir.path(), &["audit", "verify", "--expect-head", &head]);
    assert!(!bad.status.success());
    assert!(text(&bad).contains("events were removed"), "{}", text(&bad));
}
