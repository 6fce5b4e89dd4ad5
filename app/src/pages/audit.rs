//! Audit: search the redacted trail with free text and filters. The whole search lives in
//! the URL (a plain GET form, so it works without JavaScript, can be shared, and the back
//! button returns to it); pages follow stable cursors. Rows link to the session's and the
//! trace's timeline; the same search can be exported, and the chain verified from here.

use crate::api::{
    error_text, grouped, search_audit, who, AuditHit, AuditPage, AuditQuery, ChainCheck, SessionInfo, CSRF_FIELD,
};
use crate::components::clock::{span, utc};
use crate::components::post::PostForm;
use crate::components::shell::{use_session, Guarded};
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn Audit() -> impl IntoView {
    view! {
        <Title text="Audit"/>
        <Guarded path="/audit">
            <h1>"Audit"</h1>
            <AuditLoader/>
        </Guarded>
    }
}

/// The resource lives inside the guard: a page someone may not open starts no query.
#[component]
fn AuditLoader() -> impl IntoView {
    let SessionInfo { csrf_token: csrf, .. } = use_session();
    let params = leptos_router::hooks::use_query_map();
    let query = Memo::new(move |_| {
        params.with(|p| {
            let pairs: Vec<(&str, String)> = AuditQuery::NAMES
                .iter()
                .filter_map(|k| p.get(k).map(|v| (*k, v)))
                .collect();
            AuditQuery::from_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())))
        })
    });
    let page = Resource::new(move || query.get(), search_audit);
    let lookup_csrf = csrf.clone();
    view! {
        <SearchForm query=query.get_untracked()/>
        <details class="card secret-lookup">
            <summary>"Was a secret ever sent? Look it up"</summary>
            <p class="muted small">
                "The trail keeps a keyed fingerprint of every value it redacted, never the value. "
                "Paste a leaked token or password to find every call that carried it; the lookup is recorded, the value is not."
            </p>
            // A looked-up secret becomes a search for its fingerprint (never for the value).
            <PostForm action="/api/audit/secret".to_string() class="search-row".to_string() testid="secret-lookup".to_string()
                then="/audit?q={answer}".to_string() notice="secret-lookup-message".to_string()>
                <input type="hidden" name=CSRF_FIELD value=lookup_csrf/>
                <label for="secret-value" class="sr-only">"Secret value"</label>
                <input id="secret-value" name="value" type="password" autocomplete="off" required maxlength="4096" placeholder="secret value"/>
                <button type="submit">"Look up"</button>
            </PostForm>
        </details>
        <Suspense fallback=|| view! { <p class="muted">"Searching…"</p> }>
            {move || {
                let csrf = csrf.clone();
                Suspend::new(async move {
                    match page.await {
                        Ok(p) => view! { <Results page=p query=query.get_untracked() csrf/> }.into_any(),
                        Err(e) => view! { <p class="error" role="alert" data-testid="audit-error">{error_text(&e)}</p> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

const STATUSES: [&str; 10] = [
    "allowed",
    "denied",
    "pending",
    "approved",
    "modified",
    "rejected",
    "skipped",
    "expired",
    "cancelled",
    "overridden",
];
const SOURCES: [&str; 6] = ["policy", "grant", "reviewer", "override", "expiry", "agent"];
const LAYERS: [&str; 7] = [
    "allowlist",
    "schema",
    "path_guard",
    "command_guard",
    "url_guard",
    "budget",
    "rule",
];

#[component]
fn Choice(
    id: &'static str,
    name: &'static str,
    label: &'static str,
    options: &'static [&'static str],
    value: String,
) -> impl IntoView {
    view! {
        <label for=id>{label}</label>
        <select id=id name=name>
            <option value="" selected=value.is_empty()>"any"</option>
            {options.iter().map(|o| view! { <option value=*o selected=value == *o>{*o}</option> }).collect_view()}
        </select>
    }
}

#[component]
fn Text(
    id: &'static str,
    name: &'static str,
    label: &'static str,
    value: String,
    #[prop(optional)] hint: &'static str,
) -> impl IntoView {
    view! {
        <label for=id>{label}</label>
        <input id=id name=name value=value placeholder=hint autocomplete="off"/>
    }
}

#[component]
fn SearchForm(query: AuditQuery) -> impl IntoView {
    let q = query.clone();
    let open = [
        &q.since,
        &q.until,
        &q.agent,
        &q.session,
        &q.trace,
        &q.tool,
        &q.status,
        &q.layer,
        &q.rule,
        &q.source,
        &q.reviewer,
        &q.kind,
    ]
    .iter()
    .any(|v| !v.is_empty());
    view! {
        <form method="get" action="/audit" class="card audit-search" role="search" data-testid="audit-search">
            <div class="search-row">
                <label for="audit-q" class="sr-only">"Search the audit trail"</label>
                <input id="audit-q" type="search" name="q" value=q.q.clone()
                    placeholder="Search: words, \"a phrase\", prefix*" autocomplete="off"/>
                <button type="submit" class="primary">"Search"</button>
            </div>
            <details class="audit-filters" open=open>
                <summary>"Filters"</summary>
                <div class="grid-form">
                    <Text id="f-since" name="since" label="From" value=q.since.clone() hint="7d, 2026-12-01, 2026-12-01T09:30"/>
                    <Text id="f-until" name="until" label="Until" value=q.until.clone() hint="24h, 2026-12-02"/>
                    <Text id="f-agent" name="agent" label="Agent" value=q.agent.clone()/>
                    <Text id="f-session" name="session" label="Session" value=q.session.clone()/>
                    <Text id="f-trace" name="trace" label="Trace id" value=q.trace.clone()/>
                    <Text id="f-tool" name="tool" label="Tool" value=q.tool.clone()/>
                    <Choice id="f-status" name="status" label="Status" options=&STATUSES value=q.status.clone()/>
                    <Choice id="f-layer" name="layer" label="Blocked by" options=&LAYERS value=q.layer.clone()/>
                    <Text id="f-rule" name="rule" label="Rule id" value=q.rule.clone()/>
                    <Choice id="f-source" name="source" label="Decided by" options=&SOURCES value=q.source.clone()/>
                    <Text id="f-reviewer" name="reviewer" label="Reviewer" value=q.reviewer.clone()/>
                    <Text id="f-kind" name="kind" label="Event kind" value=q.kind.clone() hint="call_decided"/>
                    <label for="f-sort">"Order"</label>
                    <select id="f-sort" name="sort">
                        <option value="" selected=q.sort != "oldest">"newest first"</option>
                        <option value="oldest" selected=q.sort == "oldest">"oldest first"</option>
                    </select>
                </div>
                <p><a href="/audit">"Clear the search"</a></p>
            </details>
        </form>
    }
}

#[component]
fn Results(page: AuditPage, query: AuditQuery, csrf: String) -> impl IntoView {
    let now = page.now_ms;
    let first = query.first_page();
    let export = |format: &str| {
        let qs = first.to_query_string();
        if qs.is_empty() {
            format!("/api/audit/export?format={format}")
        } else {
            format!("/api/audit/export?{qs}&format={format}")
        }
    };
    let next = page.next.clone().map(|c| {
        let q = AuditQuery {
            after: c,
            ..query.clone()
        };
        format!("/audit?{}", q.to_query_string())
    });
    let lag = page.chain_len - page.indexed;
    let count = match (page.hits.len(), query.narrowed()) {
        (0, true) => "No event matches this search.".to_string(),
        (0, false) => "The trail holds no events yet.".to_string(),
        (1, _) => "Showing 1 event.".to_string(),
        (n, _) if page.next.is_some() => format!("Showing {n} events; more on the next page."),
        (n, _) => format!("Showing {n} events."),
    };
    view! {
        <section class="card audit-status" aria-label="The audit trail" data-testid="audit-status">
            <p>
                {format!("The chain holds {} events", grouped(page.chain_len.max(0) as u64))}
                {(lag > 0).then(|| format!(" ({} not yet searchable)", grouped(lag as u64)))}
                ". "
                <Verified check=page.verified.clone() now/>
            </p>
            <PostForm action="/api/audit/verify".to_string() class="inline".to_string() notice="verify-result".to_string()>
                <input type="hidden" name=CSRF_FIELD value=csrf/>
                <button type="submit" data-testid="verify-chain">"Verify the chain now"</button>
            </PostForm>
        </section>
        <section class="card" aria-labelledby="results-h">
            <div class="results-head">
                <h2 id="results-h" data-testid="audit-count">{count}</h2>
                <span class="export">
                    "Export this search: "
                    <a href=export("csv") download data-testid="export-csv">"CSV"</a>
                    " · "
                    <a href=export("jsonl") download data-testid="export-jsonl">"JSON Lines"</a>
                </span>
            </div>
            {(!page.hits.is_empty()).then(|| view! { <HitTable hits=page.hits.clone() now/> })}
            <nav class="pager" aria-label="Pages">
                {(!query.after.is_empty()).then(|| view! {
                    <a href=format!("/audit?{}", first.to_query_string()) data-testid="first-page">"First page"</a>
                })}
                {next.map(|href| view! { <a href=href rel="next" data-testid="next-page">"Next page"</a> })}
            </nav>
        </section>
    }
}

#[component]
fn Verified(check: Option<ChainCheck>, now: i64) -> impl IntoView {
    match check {
        None => view! { <span data-testid="verified">"Not verified since the server started."</span> }.into_any(),
        Some(c) => view! {
            <span data-testid="verified" class=if c.problem.is_some() { "error" } else { "" }>
                {format!("{} ({} ago).", c.describe(), span(now - c.checked_at_ms))}
            </span>
        }
        .into_any(),
    }
}

#[component]
fn HitTable(hits: Vec<AuditHit>, now: i64) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table class="table audit-results">
                <thead><tr>
                    <th scope="col">"When"</th><th scope="col">"Agent"</th><th scope="col">"Tool"</th>
                    <th scope="col">"Decision"</th><th scope="col">"By"</th><th scope="col">"What happened"</th>
                </tr></thead>
                <tbody>
                    {hits.into_iter().map(|h| {
                        let by = h.source.clone().map(|s| match &h.reviewer {
                            Some(r) if s == "reviewer" || s == "override" => format!("{s}: {r}"),
                            _ => s,
                        }).unwrap_or_else(|| who(&h.actor));
                        view! {
                            <tr data-testid="audit-row">
                                <td>
                                    <time title=utc(h.at_ms)>{utc(h.at_ms)}</time>
                                    <div class="muted small">{format!("#{} · {} ago", h.seq, span(now - h.at_ms))}</div>
                                </td>
                                <td>{h.agent.clone().unwrap_or_default()}</td>
                                <td>{h.tool.clone().map(|t| view! { <code>{t}</code> })}</td>
                                <td>{h.status.clone().map(|s| view! { <span class=format!("badge status-{s}")>{s.clone()}</span> })}
                                    {h.layer.clone().map(|l| view! { <div class="muted small">{format!("blocked by {l}")}</div> })}</td>
                                <td>{by}</td>
                                <td>
                                    <span data-testid="audit-summary">{h.summary.clone()}</span>
                                    <div class="links small">
                                        <code class="muted">{h.kind.clone()}</code>
                                        {h.session.clone().map(|s| view! {
                                            " · " <a href=format!("/audit/sessions/{}", crate::api::encode(&s)) data-testid="trace-link">{format!("session {s}")}</a>
                                        })}
                                        {h.trace.clone().map(|t| view! {
                                            " · " <a href=format!("/audit/traces/{}", crate::api::encode(&t))>{format!("trace {t}")}</a>
                                        })}
                                        {h.call_id.clone().map(|c| view! {
                                            " · " <a href=format!("/calls/{c}")>"call"</a>
                                        })}
                                    </div>
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}
