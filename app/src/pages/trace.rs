//! A timeline of one agent session or trace id: every proposed call with the agent's
//! reason and plan, the decision and who or what made it, reviewer actions (modifications
//! as a diff), grants, callbacks and reported results, and how long each held call
//! waited. Server-rendered (works without JavaScript); while the session is active the
//! page reloads itself when the timeline changes.

use crate::api::{error_text_in, get_trace, TraceCall, TraceKind, TraceStep, TraceView};
use crate::components::diff::Diff;
use crate::components::refresh::PollReload;
use crate::components::shell::Guarded;
use crate::i18n::{use_tr, Tr};
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
    let tr = use_tr();
    view! {
        <Title text=move || heading(tr, kind, &id.get())/>
        <p><a href="/audit">{tr.t("trace.back")}</a></p>
        <Suspense fallback=move || view! { <p class="muted">{tr.t("trace.loading")}</p> }>
            {move || Suspend::new(async move {
                match trace.await {
                    Ok(t) => view! { <Timeline t/> }.into_any(),
                    Err(e) => view! {
                        <h1>{heading(tr, kind, &id.get_untracked())}</h1>
                        <p class="error" role="alert">{error_text_in(tr, &e)}</p>
                    }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Timeline(t: TraceView) -> impl IntoView {
    let tr = use_tr();
    let title = heading(tr, t.kind, &t.id);
    let now = t.now_ms;
    let active = t.active();
    let held = t.calls.iter().filter(|c| c.pending).count();
    let span_text = match (t.first_at_ms, t.last_at_ms) {
        (Some(a), Some(b)) => format!("{} → {}", tr.time(a), tr.time(b)),
        _ => String::new(),
    };
    view! {
        <header class="trace-head">
            <h1 data-testid="trace-title">{title}</h1>
            <p class="muted">
                {format!(
                    "{} · {} · {} · {}",
                    agents_text(tr, &t.agents),
                    calls_text(tr, t.calls.len() as u64),
                    events_text(tr, t.events),
                    span_text
                )}
            </p>
            {active.then(|| view! {
                // Every change to the timeline is an event: a new count or a later last
                // event means there is more to show.
                <PollReload url=follow_url(t.kind, &t.id) fields=vec!["events".into(), "last_at_ms".into()] seconds=REFRESH_SECONDS/>
                <p class="live-note" role="status" data-testid="trace-live">
                    {tr.f("trace.live", &[("n", REFRESH_SECONDS.to_string().as_str())])}
                    {(held > 0).then(|| tr.f("trace.live_held", &[("calls", calls_text(tr, held as u64).as_str())]))}
                </p>
            })}
            {t.truncated.then(|| view! {
                <p class="notice">{tr.f("trace.truncated", &[("n", t.events.to_string().as_str())])}</p>
            })}
        </header>
        <ol class="timeline" data-testid="timeline">
            {t.calls.into_iter().map(|c| view! { <CallEntry c now/> }).collect_view()}
        </ol>
        {(!t.other.is_empty()).then(|| view! {
            <section class="card">
                <h2>{tr.t("trace.other_events")}</h2>
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

/// "Session s-1", "Trace t-9": the page's title and heading.
fn heading(tr: Tr, kind: TraceKind, id: &str) -> String {
    match kind {
        TraceKind::Session => tr.f("trace.session_title", &[("id", id)]),
        TraceKind::Trace => tr.f("trace.trace_title", &[("id", id)]),
    }
}

/// "1 call", "3 calls".
fn calls_text(tr: Tr, n: u64) -> String {
    if n == 1 {
        tr.t("trace.calls_one").to_string()
    } else {
        tr.f("trace.calls_many", &[("n", n.to_string().as_str())])
    }
}

/// "1 event", "3 events".
fn events_text(tr: Tr, n: u64) -> String {
    if n == 1 {
        tr.t("trace.events_one").to_string()
    } else {
        tr.f("trace.events_many", &[("n", n.to_string().as_str())])
    }
}

fn agents_text(tr: Tr, agents: &[String]) -> String {
    match agents.len() {
        0 => tr.t("trace.no_agent").to_string(),
        1 => tr.f("trace.agent_one", &[("name", agents[0].as_str())]),
        _ => tr.f(
            "trace.agents_many",
            &[("names", agents.join(tr.t("trace.list_sep")).as_str())],
        ),
    }
}

#[component]
fn CallEntry(c: TraceCall, now: i64) -> impl IntoView {
    let tr = use_tr();
    let decided = match (c.source.as_deref(), c.decided_by.as_deref()) {
        _ if c.pending => tr.t("trace.decided_held").to_string(),
        (_, Some("policy")) | (Some("policy"), None) => tr.t("trace.decided_policy").to_string(),
        (Some("grant"), by) => tr.f("trace.decided_by", &[("who", by.unwrap_or(tr.t("trace.a_grant")))]),
        (_, Some(by)) => tr.f("trace.decided_by", &[("who", tr.who(by).as_str())]),
        _ => String::new(),
    };
    let waited = c.waited_ms.map(|w| {
        if c.pending {
            tr.f("trace.waiting_for", &[("span", tr.span(w).as_str())])
        } else {
            tr.f("trace.waited", &[("span", tr.span(w).as_str())])
        }
    });
    let _ = now;
    view! {
        <li class="card trace-call" data-testid="trace-call" id=c.id.clone()>
            <div class="trace-call-head">
                <time class="muted">{tr.time(c.at_ms)}</time>
                <code class="tool">{c.server.clone().map(|s| format!("{s} · ")).unwrap_or_default()}{c.tool.clone()}</code>
                <span class=format!("badge status-{}", c.status) data-testid="trace-status">{tr.word("status", &c.status)}</span>
                <span class="muted">{decided}</span>
                {waited.map(|w| view! { <span class=if c.pending { "badge waiting" } else { "muted" } data-testid="trace-waited">{w}</span> })}
            </div>
            {c.blocked_by.clone().map(|l| view! {
                <p class="small">
                    {tr.f("trace.layer", &[("layer", tr.word("layer", &l))])}
                    {c.rule.clone().map(|r| tr.f("trace.rule", &[("rule", r.as_str())]))}
                </p>
            })}
            {c.why.clone().map(|w| view! { <p class="small"><strong>{tr.t("trace.why")}</strong>{w}</p> })}
            {c.reason.clone().map(|r| view! { <p><strong>{tr.t("trace.reason")}</strong>{r}</p> })}
            {c.plan.clone().map(|p| view! { <p><strong>{tr.t("trace.plan")}</strong>{p}</p> })}
            <details>
                <summary>{tr.t("trace.arguments")}</summary>
                <pre class="json">{c.arguments.clone()}</pre>
            </details>
            {(!c.steps.is_empty()).then(|| view! {
                <ul class="steps">{c.steps.into_iter().map(|s| view! { <Step s/> }).collect_view()}</ul>
            })}
            <p class="small links">
                <a href=format!("/calls/{}", c.id)>{tr.t("trace.open_call")}</a>
                {c.trace.clone().map(|t| view! {
                    " · " <a href=format!("/audit/traces/{}", crate::api::encode(&t))>{tr.f("trace.trace_link", &[("id", t.as_str())])}</a>
                })}
                {c.grant_id.clone().map(|g| view! { <span class="muted">{tr.f("trace.grant", &[("id", g.as_str())])}</span> })}
            </p>
        </li>
    }
}

#[component]
fn Step(s: TraceStep) -> impl IntoView {
    let tr = use_tr();
    view! {
        <li data-testid="trace-step">
            <time class="muted small">{tr.time(s.at_ms)}</time>
            " "
            <span>{s.text.clone()}</span>
            {s.diff.map(|(before, after)| view! { <Diff before after/> })}
        </li>
    }
}
