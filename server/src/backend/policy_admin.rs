//! The policy page's service: the policy in force, its history with diffs, checking,
//! applying, rolling back, and replays of recorded calls under a proposed version.

use super::*;
use crate::policies::{self, Change, Problem};
use crate::store::policies::{self as rows, Via};
use app::api::request_tr;
use app::api::{PolicyAdmin, PolicyChangeView, PolicyCheck, PolicyPage, PolicyProblem, ReplayReport};

/// Changes the page lists.
const HISTORY: i64 = 50;
/// A policy text larger than this is refused before it is parsed.
const MAX_SOURCE: usize = 512 * 1024;

fn problems(source: &str, list: Vec<Problem>) -> Vec<PolicyProblem> {
    let lines: Vec<&str> = source.lines().collect();
    list.into_iter()
        .map(|p| PolicyProblem {
            line: p.line.map(|l| l as u32),
            text: p.line.and_then(|l| lines.get(l.wrapping_sub(1))).map(|t| t.to_string()),
            location: p.location,
            message: p.message,
        })
        .collect()
}

fn refused(message: impl Into<String>) -> PolicyCheck {
    PolicyCheck {
        ok: false,
        message: message.into(),
        problems: Vec::new(),
        version: None,
    }
}

impl ServerBackend {
    /// Compile `source`, or the check that says why not.
    fn compiled(&self, source: &str) -> Result<Policy, PolicyCheck> {
        if source.len() > MAX_SOURCE {
            let kib = (MAX_SOURCE / 1024).to_string();
            return Err(refused(request_tr().f("srv.policy_too_big", &[("kib", &kib)])));
        }
        policies::compile(source).map_err(|list| {
            let n = list.len();
            let key = if n == 1 {
                "srv.policy_problem"
            } else {
                "srv.policy_problems"
            };
            PolicyCheck {
                ok: false,
                message: request_tr().f(key, &[("n", &n.to_string())]),
                problems: problems(source, list),
                version: None,
            }
        })
    }

    /// Write the file, then put the policy in force through the ledger.
    async fn put_in_force(
        &self,
        actor: &UserView,
        policy: Policy,
        source: String,
        via: Via,
        note: &str,
    ) -> PolicyCheck {
        if let Err(e) = policies::write_file(&self.policy_file, &source) {
            tracing::error!(error = %e, "writing the policy file");
            return refused(format!("{e}; nothing changed"));
        }
        let change = Change {
            policy: Arc::new(policy),
            source,
            actor: format!("user:{}", actor.username),
            via,
            note: (!note.trim().is_empty()).then(|| note.trim().chars().take(500).collect()),
        };
        match policies::apply(&self.ledger, change).await {
            Ok(a) if a.changed => {
                tracing::warn!(actor = %actor.username, version = %a.version, previous = %a.previous, "policy changed");
                PolicyCheck {
                    ok: true,
                    message: request_tr().f(
                        "srv.policy_in_force",
                        &[("name", &a.name), ("version", &a.version), ("previous", &a.previous)],
                    ),
                    problems: Vec::new(),
                    version: Some(a.version),
                }
            }
            Ok(a) => PolicyCheck {
                ok: true,
                message: request_tr().f("srv.policy_already", &[("name", &a.name), ("version", &a.version)]),
                problems: Vec::new(),
                version: Some(a.version),
            },
            Err(e) => refused(internal(e, "applying a policy").to_string()),
        }
    }
}

#[async_trait::async_trait]
impl PolicyAdmin for ServerBackend {
    async fn policy_page(&self) -> Result<PolicyPage, AppError> {
        let policy = self.policy.get();
        let changes = rows::changes(&self.db, HISTORY)
            .await
            .map_err(|e| internal(e, "reading policy changes"))?;
        let mut versions: Vec<String> = changes
            .iter()
            .flat_map(|c| std::iter::once(c.version.clone()).chain(c.previous.clone()))
            .chain(std::iter::once(policy.version.to_string()))
            .collect();
        versions.sort();
        versions.dedup();
        let mut texts: HashMap<String, Option<String>> = HashMap::new();
        for v in versions {
            let t = rows::source(&self.db, &v)
                .await
                .map_err(|e| internal(e, "reading a policy version"))?
                .and_then(|(_, s)| s);
            texts.insert(v, t);
        }
        let text = |v: &str| texts.get(v).cloned().flatten();
        let source = text(&policy.version)
            .or_else(|| std::fs::read_to_string(&self.policy_file).ok())
            .unwrap_or_default();
        let changes = changes
            .into_iter()
            .map(|c| {
                let diff = match (c.previous.as_deref().and_then(text), text(&c.version)) {
                    (Some(before), Some(after)) => app::components::diff::hunks(&before, &after, 3),
                    _ => Vec::new(),
                };
                PolicyChangeView {
                    kept: text(&c.version).is_some(),
                    id: c.id,
                    version: c.version,
                    name: c.name,
                    previous: c.previous,
                    actor: c.actor,
                    via: c.via,
                    note: c.note,
                    at_ms: c.at_ms,
                    diff,
                }
            })
            .collect();
        Ok(PolicyPage {
            name: policy.name.clone(),
            version: policy.version.to_string(),
            source,
            file: self.policy_file.display().to_string(),
            changes,
            now_ms: store::now_ms(),
        })
    }

    fn check_policy(&self, source: &str) -> PolicyCheck {
        match self.compiled(source) {
            Ok(p) => PolicyCheck {
                ok: true,
                message: {
                    let tr = request_tr();
                    let key = if *p.version == *self.policy.get().version {
                        "srv.policy_compiles_in_force"
                    } else {
                        "srv.policy_compiles"
                    };
                    let tools = p.tool_names().len().to_string();
                    tr.f(key, &[("name", &p.name), ("version", &p.version), ("tools", &tools)])
                },
                problems: Vec::new(),
                version: Some(p.version.to_string()),
            },
            Err(c) => c,
        }
    }

    async fn apply_policy(&self, actor: &UserView, source: &str, note: &str) -> PolicyCheck {
        match self.compiled(source) {
            Ok(p) => self.put_in_force(actor, p, source.to_string(), Via::Page, note).await,
            Err(c) => {
                let list: Vec<Problem> = c
                    .problems
                    .iter()
                    .map(|p| Problem {
                        line: p.line.map(|l| l as usize),
                        location: p.location.clone(),
                        message: p.message.clone(),
                    })
                    .collect();
                let ev = policies::refused_event(&format!("user:{}", actor.username), Via::Page, &list);
                let _ = self.ledger.send(crate::ledger::Command::Audit(ev)).await;
                c
            }
        }
    }

    async fn rollback_policy(&self, actor: &UserView, version: &str, note: &str) -> PolicyCheck {
        let source = match rows::source(&self.db, version).await {
            Ok(Some((_, Some(s)))) => s,
            Ok(_) => return refused(format!("version {version} is not kept; nothing changed")),
            Err(e) => return refused(internal(e, "reading a policy version").to_string()),
        };
        match self.compiled(&source) {
            Ok(p) => self.put_in_force(actor, p, source, Via::Rollback, note).await,
            // A kept version that no longer compiles (a newer engine): say so, change nothing.
            Err(c) => c,
        }
    }

    async fn draft_policy(&self, actor: &UserView, source: &str) -> PolicyCheck {
        let p = match self.compiled(source) {
            Ok(p) => p,
            Err(c) => return c,
        };
        let kept = async {
            let mut conn = self.db.acquire().await?;
            rows::store_version(&mut conn, &p.version, &p.name, Some(source), store::now_ms()).await
        }
        .await;
        if let Err(e) = kept {
            return refused(internal(e, "keeping a proposed policy").to_string());
        }
        tracing::info!(actor = %actor.username, version = %p.version, "policy kept for a replay");
        PolicyCheck {
            ok: true,
            message: request_tr().f("srv.policy_kept", &[("name", &p.name), ("version", &p.version)]),
            problems: Vec::new(),
            version: Some(p.version.to_string()),
        }
    }

    async fn replay(
        &self,
        actor: &UserView,
        version: &str,
        since: &str,
        agent: &str,
    ) -> Result<ReplayReport, AppError> {
        let source = rows::source(&self.db, version)
            .await
            .map_err(|e| internal(e, "reading a policy version"))?
            .and_then(|(_, s)| s)
            .ok_or_else(|| AppError::Invalid(format!("version {version:?} is not kept")))?;
        let proposed = policies::compile(&source)
            .map_err(|_| AppError::Invalid(format!("version {version} no longer compiles")))?;
        let now = store::now_ms();
        let since = if since.trim().is_empty() { "7d" } else { since };
        let since_ms = crate::audit::search::parse_time(since, now)
            .map_err(AppError::Invalid)?
            .unwrap_or(now - 7 * 86_400_000);
        // One replay at a time: each reads the period's calls in full.
        let _one = self
            .replays
            .try_acquire()
            .map_err(|_| AppError::Conflict("a replay is already running; try again when it ends".into()))?;
        let scope = policies::replay::Scope {
            since_ms,
            until_ms: now,
            agent: agent.trim().to_string(),
        };
        let report = policies::replay::replay(&self.db, &self.sealer, &proposed, &scope)
            .await
            .map_err(|e| internal(e, "replaying recorded calls"))?;
        let ev = crate::audit::NewEvent {
            kind: "policy_replayed",
            actor: format!("user:{}", actor.username),
            call_id: None,
            session_id: None,
            data: serde_json::json!({
                "version": version, "since_ms": since_ms, "agent": scope.agent,
                "replayed": report.replayed, "changed": report.changed,
            }),
        };
        let _ = self.ledger.send(crate::ledger::Command::Audit(ev)).await;
        Ok(report)
    }
}
