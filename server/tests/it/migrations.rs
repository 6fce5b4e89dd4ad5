//! Upgrading a database written by an earlier release: every call reads back the same.

use secrecy::SecretString;
use server::store::{self, calls, details::CallDetails};
use std::borrow::Cow;

#[tokio::test]
async fn calls_and_audit_events_stored_before_the_lean_schema_read_back_the_same_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let url = SecretString::from(format!("sqlite://{}/old.db", dir.path().display()));
    let db = store::connect(&url).await.unwrap();
    // The schema as the previous release left it (migrations 1–4).
    let mut old = sqlx::migrate!("../migrations/sqlite");
    old.migrations = Cow::Owned(old.migrations.iter().filter(|m| m.version < 5).cloned().collect());
    old.run(&db).await.unwrap();
    sqlx::query("INSERT INTO agents (id, created_at_ms, updated_at_ms) VALUES ('bot', 1, 1)")
        .execute(&db)
        .await
        .unwrap();
    let insert = "INSERT INTO tool_calls (id, agent_id, message_id, body_sha256, session_id, tool, arguments,
        arguments_redacted, status, reason, risk, approvers_required, policy_version, details, response,
        created_at_ms, expires_at_ms, callback_url)
        VALUES ($1, 'bot', $2, x'00', 's', 'send_email', $3, $4, $5, 'r', 'high', 1, $6, $7, '{}', $8, $9, $10)";
    let full_details = r#"{"shadow":[],"impact":null,"pinned":[],"masked":[{"path":"/token","kind":"secret"}],
        "destructive":true,"break_glass":false,"grantable":true,"charged":[],"not_grantable":null}"#;
    for (id, msg, args, redacted, status, version, details, at) in [
        (
            "tc_1",
            "m1",
            r#"{"token":"hunter2"}"#,
            r#"{"token":"[REDACTED]"}"#,
            "pending",
            "sha256:a",
            full_details,
            10,
        ),
        (
            "tc_2",
            "m2",
            r#"{"to":"x@example.com"}"#,
            r#"{"to":"x@example.com"}"#,
            "allowed",
            "sha256:a",
            "{}",
            20,
        ),
        (
            "tc_3",
            "m3",
            r#"{"to":"y@example.com"}"#,
            r#"{"to":"y@example.com"}"#,
            "denied",
            "sha256:b",
            "{}",
            30,
        ),
    ] {
        sqlx::query(insert)
            .bind(id)
            .bind(msg)
            .bind(args)
            .bind(redacted)
            .bind(status)
            .bind(version)
            .bind(details)
            .bind(at)
            .bind((status == "pending").then_some(at + 1000))
            .bind((id == "tc_1").then_some("https://agent.example/hook"))
            .execute(&db)
            .await
            .unwrap();
    }
    // Rows of other tables that refer to a call.
    sqlx::query("INSERT INTO callbacks (call_id, state, next_at_ms) VALUES ('tc_1', 'queued', 5)")
        .execute(&db)
        .await
        .unwrap();
    sqlx::query("INSERT INTO call_approvals (call_id, reviewer, at_ms) VALUES ('tc_1', 'user:ann', 5)")
        .execute(&db)
        .await
        .unwrap();

    // Two audit events as the previous release stored them (hex hashes, the previous hash
    // stored beside each).
    let mut prev = server::audit::GENESIS.to_string();
    for seq in 1..=2i64 {
        let data = serde_json::json!({"n": seq});
        let hash = server::audit::event_hash(seq, seq, "note", "system", None, None, &data, &prev);
        sqlx::query(
            "INSERT INTO audit_events (seq, at_ms, kind, actor, data, prev_hash, hash)
             VALUES ($1, $2, 'note', 'system', $3, $4, $5)",
        )
        .bind(seq)
        .bind(seq)
        .bind(data.to_string())
        .bind(&prev)
        .bind(&hash)
        .execute(&db)
        .await
        .unwrap();
        prev = hash;
    }

    store::migrate(&db).await.unwrap();

    // The events written before still verify, and the chain goes on from them.
    let v = server::audit::verify(&db).await.unwrap();
    assert_eq!((v.problem.clone(), v.events, v.head.hash.clone()), (None, 2, prev));
    let mut tx = store::begin_write(&db).await.unwrap();
    let ev = server::audit::NewEvent {
        kind: "note",
        actor: "system".into(),
        call_id: None,
        session_id: None,
        data: serde_json::json!({"n": 3}),
    };
    store::append_audit(&mut tx, 3, &ev).await.unwrap();
    tx.commit().await.unwrap();
    let v = server::audit::verify(&db).await.unwrap();
    assert_eq!((v.problem, v.events), (None, 3));

    let one = calls::get(&db, "tc_1").await.unwrap().unwrap();
    assert_eq!(one.policy_version, "sha256:a");
    assert_eq!(one.arguments, r#"{"token":"hunter2"}"#);
    assert_eq!(one.arguments_redacted, r#"{"token":"[REDACTED]"}"#);
    assert_eq!(one.callback_url.as_deref(), Some("https://agent.example/hook"));
    let two = calls::get(&db, "tc_2").await.unwrap().unwrap();
    assert_eq!(
        two.arguments_redacted, two.arguments,
        "read back from the one stored copy"
    );
    assert_eq!(
        calls::get(&db, "tc_3").await.unwrap().unwrap().policy_version,
        "sha256:b"
    );
    // Stored once: no copy of unchanged arguments, no empty details, versions by reference.
    let (copies, empty, versions): (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(arguments_redacted) FROM tool_calls), (SELECT count(details) FROM tool_calls),
                (SELECT count(*) FROM policy_versions)",
    )
    .fetch_one(&db)
    .await
    .unwrap();
    assert_eq!((copies, empty, versions), (1, 1, 2));
    let mut conn = db.acquire().await.unwrap();
    let extras = calls::extras_in(&mut conn, "tc_1").await.unwrap().unwrap();
    let d = CallDetails::parse(&extras.details);
    assert!(d.grantable && d.destructive);
    assert_eq!(d.masked[0].path, "/token");
    assert_eq!(
        calls::extras_in(&mut conn, "tc_2").await.unwrap().unwrap().details,
        "{}"
    );
    drop(conn);
    // What referred to the calls still does, and foreign keys are enforced again.
    let approvals: i64 = sqlx::query_scalar("SELECT count(*) FROM call_approvals WHERE call_id = 'tc_1'")
        .fetch_one(&db)
        .await
        .unwrap();
    assert_eq!(approvals, 1);
    let orphan = sqlx::query("INSERT INTO call_approvals (call_id, reviewer, at_ms) VALUES ('tc_none', 'x', 1)")
        .execute(&db)
        .await;
    assert!(orphan.is_err(), "foreign keys are on after the migration");
}
