//! A timeline of one agent session or trace id: every proposed call with the agent's
//! reason and plan, the decision and who or what made it, reviewer actions (modifications
//! as a diff), grants, callbacks and reported results, and how long each held call
//! waited. Server-rendered (works without JavaScript); while the session is active the
//! page reloads itself when the timeline changes.

use crate::api::{error_text, get_trace, who, TraceCall, TraceKind, TraceStep, TraceView};
use crate::components::clock::{span, utc};
use crate::components::diff::Diff;
use crate::components::refresh::PollReload;
use crate::components::shell::Guarded;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

#[component]
pub fn SessionTrace() -> impl IntoView {
    view! { <Guarded path="/audit"><TraceLoader kind=TraceKind::Session/></Guarded> }
}

#[component]
pub fn TraceIdTrace() -> impl IntoView {
    view! { <Guarded path="/audit"><TraceLoader kind=TraceKind::Trace/></Guarded> }
}

/// Seconds between refreshes of an active timeline.
const REFRESH_SECONDS: u64 = 3;

#[component]
fn TraceLoader(kind: TraceKind) -> impl IntoView {
    let params = use_params_map();
    let id = Memo::new(move |_| params.with(|p| p.get("id").unwrap_or_default()));
    let trace = Resource::new(move || id.get(), move |id| get_trace(kind, id));
    let noun = match kind {
        TraceKind::Session => "Session",
        TraceKind::Trace => "Trace",
    };
    view! {
        <Title text=move || format!("{noun} {}", id.get())/>
        <p><a href="/audit">"← Audit search"</a></p>
        <Suspense fallback=|| view! { <p class="muted">"Reading the timeline…"</p> }>
            {move || Suspend::new(async move {
                match trace.await {
                    Ok(t) => view! { <Timeline t/> }.into_any(),
                    Err(e) => view! {
                        <h1>{format!("{noun} {}", id.get_untracked())}</h1>
                        <p class="error" role="alert">{error_text(&e)}</p>
                    }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Timeline(t: TraceView) -> impl IntoView {
    let noun = match t.kind {
        TraceKind::Session => "Session",
        TraceKind::Trace => "Trace",
    };
    let now = t.now_ms;
    let active = t.active();
    let held = t.calls.iter().filter(|c| c.pending).count();
    let span_text = match (t.first_at_ms, t.last_at_ms) {
        (Some(a), Some(b)) => format!("{} → {}", utc(a), utc(b)),
        _ => String::new(),
    };
    view! {
        <header class="trace-head">
            <h1 data-testid="trace-title">{format!("{noun} {}", t.id)}</h1>
            <p class="muted">
                {format!(
                    "{} · {} · {} · {}",
                    agents_text(&t.agents),
                    count(t.calls.len() as u64, "call"),
                    count(t.events, "event"),
                    span_text
                )}
            </p>
            {active.then(|| view! {
                // Every change to the timeline is an event: a new count or a later last
                // event means there is more to show.
                <PollReload url=follow_url(t.kind, &t.id) fields=vec!["events".into(), "last_at_ms".into()] seconds=REFRESH_SECONDS/>
                <p class="live-note" role="status" data-testid="trace-live">
                    {format!("Active: this page follows new events every {REFRESH_SECONDS} s.")}
                    {(held > 0).then(|| format!(" {} waiting for a decision.", count(held as u64, "call")))}
                </p>
            })}
            {t.truncated.then(|| view! {
                <p class="notice">{format!("Only the latest {} events are shown; search the audit trail for older ones.", t.events)}</p>
            })}
        </header>
        <ol class="timeline" data-testid="timeline">
            {t.calls.into_iter().map(|c| view! { <CallEntry c now/> }).collect_view()}
        </ol>
        {(!t.other.is_empty()).then(|| view! {
            <section class="card">
                <h2>"Other events"</h2>
                <ul class="steps">{t.other.into_iter().map(|s| view! { <Step s/> }).collect_view()}</ul>
            </section>
        })}
    }
}

/// The timeline's server function, as the page's poller asks it.
fn follow_url(kind: TraceKind, id: &str) -> String {
    let kind = match kind {
        TraceKind::Session => "Session",
        TraceKind::Trace => "Trace",
    };
    format!("/api/audit/trace?kind={kind}&id={}", crate::api::encode(id))
}

/// "1 call", "3 calls".
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn agents_text(agents: &[String]) -> String {
    match agents.len() {
        0 => "no agent".into(),
        1 => format!("agent {}", agents[0]),
        _ => format!("agents {}", agents.join(", ")),
    }
}

#[component]
fn CallEntry(c: TraceCall, now: i64) -> impl IntoView {
    let decided = match (c.source.as_deref(), c.decided_by.as_deref()) {
        _ if c.pending => "held for review by the policy".to_string(),
        (_, Some("policy")) | (Some("policy"), None) => "by the policy".to_string(),
        (Some("grant"), by) => format!("by {}", by.unwrap_or("an approve-all grant")),
        (_, Some(by)) => format!("by {}", who(by)),
        _ => String::new(),
    };
    let waited = c.waited_ms.map(|w| {
        if c.pending {
            format!("waiting for {}", span(w))
        } else {
            format!("waited {}", span(w))
        }
    });
    let _ = now;
    view! {
        <li class="card trace-call" data-testid="trace-call" id=c.id.clone()>
            <div class="trace-call-head">
                <time class="muted">{utc(c.at_ms)}</time>
                <code class="tool">{c.server.clone().map(|s| format!("{s} · ")).unwrap_or_default()}{c.tool.clone()}</code>
                <span class=format!("badge status-{}", c.status) data-testid="trace-status">{c.status.clone()}</span>
                <span class="muted">{decided}</span>
                {waited.map(|w| view! { <span class=if c.pending { "badge waiting" } else { "muted" } data-testid="trace-waited">{w}</span> })}
            </div>
            {c.blocked_by.clone().map(|l| view! {
                <p class="small">{format!("Layer: {l}")}{c.rule.clone().map(|r| format!(" · rule {r}"))}</p>
            })}
            {c.why.clone().map(|w| view! { <p class="small"><strong>"Why: "</strong>{w}</p> })}
            {c.reason.clone().map(|r| view! { <p><strong>"Agent's reason: "</strong>{r}</p> })}
            {c.plan.clone().map(|p| view! { <p><strong>"Plan: "</strong>{p}</p> })}
            <details>
                <summary>"Arguments (redacted)"</summary>
                <pre class="json">{c.arguments.clone()}</pre>
            </details>
            {(!c.steps.is_empty()).then(|| view! {
                <ul class="steps">{c.steps.into_iter().map(|s| view! { <Step s/> }).collect_view()}</ul>
            })}
            <p class="small links">
                <a href=format!("/calls/{}", c.id)>"Open the call"</a>
                {c.trace.clone().map(|t| view! {
                    " · " <a href=format!("/audit/traces/{}", crate::api::encode(&t))>{format!("trace {t}")}</a>
                })}
                {c.grant_id.clone().map(|g| view! { <span class="muted">{format!(" · grant {g}")}</span> })}
            </p>
        </li>
    }
}

#[component]
fn Step(s: TraceStep) -> impl IntoView {
    view! {
        <li data-testid="trace-step">
            <time class="muted small">{utc(s.at_ms)}</time>
            " "
            <span>{s.text.clone()}</span>
            {s.diff.map(|(before, after)| view! { <Diff before after/> })}
        </li>
    }
}
