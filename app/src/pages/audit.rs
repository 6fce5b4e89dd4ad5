//! Audit: search the redacted trail with free text and filters. The whole search lives in
//! the URL (a plain GET form, so it works without JavaScript, can be shared, and the back
//! button returns to it); pages follow stable cursors. Rows link to the session's and the
//! trace's timeline; the same search can be exported, and the chain verified from here.

use crate::api::{
    error_text_in, grouped, search_audit, AuditHit, AuditPage, AuditQuery, ChainCheck, SessionInfo, CSRF_FIELD,
};
use crate::components::post::PostForm;
use crate::components::shell::{use_session, Guarded};
use crate::i18n::{use_tr, Tr};
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn Audit() -> impl IntoView {
    let tr = use_tr();
    view! {
        <Title text=tr.t("audit.title")/>
        <Guarded path="/audit">
            <h1>{tr.t("audit.heading")}</h1>
            <AuditLoader/>
        </Guarded>
    }
}

/// The resource lives inside the guard: a page someone may not open starts no query.
#[component]
fn AuditLoader() -> impl IntoView {
    let SessionInfo { csrf_token: csrf, .. } = use_session();
    let tr = use_tr();
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
            <summary>{tr.t("audit.secret_summary")}</summary>
            <p class="muted small">{tr.t("audit.secret_help")}</p>
            // A looked-up secret becomes a search for its fingerprint (never for the value).
            <PostForm action="/api/audit/secret".to_string() class="search-row".to_string() testid="secret-lookup".to_string()
                then="/audit?q={answer}".to_string() notice="secret-lookup-message".to_string()>
                <input type="hidden" name=CSRF_FIELD value=lookup_csrf/>
                <label for="secret-value" class="sr-only">{tr.t("audit.secret_label")}</label>
                <input id="secret-value" name="value" type="password" autocomplete="off" required maxlength="4096" placeholder=tr.t("audit.secret_placeholder")/>
                <button type="submit">{tr.t("audit.secret_submit")}</button>
            </PostForm>
        </details>
        <Suspense fallback=move || view! { <p class="muted">{tr.t("audit.searching")}</p> }>
            {move || {
                let csrf = csrf.clone();
                Suspend::new(async move {
                    match page.await {
                        Ok(p) => view! { <Results page=p query=query.get_untracked() csrf/> }.into_any(),
                        Err(e) => view! { <p class="error" role="alert" data-testid="audit-error">{error_text_in(tr, &e)}</p> }.into_any(),
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

/// A call status as people read it (for option lists and facets, which take a `fn`).
pub(crate) fn status_text(tr: Tr, status: &str) -> String {
    tr.word("status", status).to_string()
}

/// A policy layer as people read it.
pub(crate) fn layer_text(tr: Tr, layer: &str) -> String {
    tr.word("layer", layer).to_string()
}

/// Who or what decided a call (the audit trail's `source`), as people read it.
pub(crate) fn source_text(tr: Tr, source: &str) -> String {
    let text = match source {
        "policy" => tr.t("audit.source_policy"),
        "grant" => tr.t("audit.source_grant"),
        "reviewer" => tr.t("audit.source_reviewer"),
        "override" => tr.t("audit.source_override"),
        "expiry" => tr.t("audit.source_expiry"),
        "agent" => tr.t("audit.source_agent"),
        other => return other.to_string(),
    };
    text.to_string()
}

#[component]
fn Choice(
    id: &'static str,
    name: &'static str,
    label: &'static str,
    options: &'static [&'static str],
    // The text shown for an option (its value stays as it is).
    words: fn(Tr, &str) -> String,
    value: String,
) -> impl IntoView {
    let tr = use_tr();
    view! {
        <label for=id>{label}</label>
        <select id=id name=name>
            <option value="" selected=value.is_empty()>{tr.t("audit.any")}</option>
            {options.iter().map(|o| view! { <option value=*o selected=value == *o>{words(tr, o)}</option> }).collect_view()}
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
    let tr = use_tr();
    view! {
        <form method="get" action="/audit" class="card audit-search" role="search" data-testid="audit-search">
            <div class="search-row">
                <label for="audit-q" class="sr-only">{tr.t("audit.search_label")}</label>
                <input id="audit-q" type="search" name="q" value=q.q.clone()
                    placeholder=tr.t("audit.search_placeholder") autocomplete="off"/>
                <button type="submit" class="primary">{tr.t("audit.search")}</button>
            </div>
            <details class="audit-filters" open=open>
                <summary>{tr.t("audit.filters")}</summary>
                <div class="grid-form">
                    // The hints are examples of what the fields accept (dates, durations, an event kind).
                    <Text id="f-since" name="since" label=tr.t("audit.f_since") value=q.since.clone() hint="7d, 2026-12-01, 2026-12-01T09:30"/>
                    <Text id="f-until" name="until" label=tr.t("audit.f_until") value=q.until.clone() hint="24h, 2026-12-02"/>
                    <Text id="f-agent" name="agent" label=tr.t("audit.f_agent") value=q.agent.clone()/>
                    <Text id="f-session" name="session" label=tr.t("audit.f_session") value=q.session.clone()/>
                    <Text id="f-trace" name="trace" label=tr.t("audit.f_trace") value=q.trace.clone()/>
                    <Text id="f-tool" name="tool" label=tr.t("audit.f_tool") value=q.tool.clone()/>
                    <Choice id="f-status" name="status" label=tr.t("audit.f_status") options=&STATUSES words=status_text value=q.status.clone()/>
                    <Choice id="f-layer" name="layer" label=tr.t("audit.f_layer") options=&LAYERS words=layer_text value=q.layer.clone()/>
                    <Text id="f-rule" name="rule" label=tr.t("audit.f_rule") value=q.rule.clone()/>
                    <Choice id="f-source" name="source" label=tr.t("audit.f_source") options=&SOURCES words=source_text value=q.source.clone()/>
                    <Text id="f-reviewer" name="reviewer" label=tr.t("audit.f_reviewer") value=q.reviewer.clone()/>
                    <Text id="f-kind" name="kind" label=tr.t("audit.f_kind") value=q.kind.clone() hint="call_decided"/>
                    <label for="f-sort">{tr.t("audit.f_sort")}</label>
                    <select id="f-sort" name="sort">
                        <option value="" selected=q.sort != "oldest">{tr.t("audit.sort_newest")}</option>
                        <option value="oldest" selected=q.sort == "oldest">{tr.t("audit.sort_oldest")}</option>
                    </select>
                </div>
                <p><a href="/audit">{tr.t("audit.clear")}</a></p>
            </details>
        </form>
    }
}

#[component]
fn Results(page: AuditPage, query: AuditQuery, csrf: String) -> impl IntoView {
    let tr = use_tr();
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
        (0, true) => tr.t("audit.count_none_match").to_string(),
        (0, false) => tr.t("audit.count_empty").to_string(),
        (1, _) => tr.t("audit.count_one").to_string(),
        (n, _) if page.next.is_some() => tr.f("audit.count_more", &[("n", n.to_string().as_str())]),
        (n, _) => tr.f("audit.count_many", &[("n", n.to_string().as_str())]),
    };
    view! {
        <section class="card audit-status" aria-label=tr.t("audit.status_label") data-testid="audit-status">
            <p>
                {tr.f("audit.chain_holds", &[("n", grouped(page.chain_len.max(0) as u64).as_str())])}
                {(lag > 0).then(|| tr.f("audit.not_searchable", &[("n", grouped(lag as u64).as_str())]))}
                {tr.t("audit.chain_end")}
                <Verified check=page.verified.clone() now/>
            </p>
            <PostForm action="/api/audit/verify".to_string() class="inline".to_string() notice="verify-result".to_string()>
                <input type="hidden" name=CSRF_FIELD value=csrf/>
                <button type="submit" data-testid="verify-chain">{tr.t("audit.verify")}</button>
            </PostForm>
        </section>
        <section class="card" aria-labelledby="results-h">
            <div class="results-head">
                <h2 id="results-h" data-testid="audit-count">{count}</h2>
                <span class="export">
                    {tr.t("audit.export")}
                    <a href=export("csv") download data-testid="export-csv">"CSV"</a>
                    " · "
                    <a href=export("jsonl") download data-testid="export-jsonl">"JSON Lines"</a>
                </span>
            </div>
            {(!page.hits.is_empty()).then(|| view! { <HitTable hits=page.hits.clone() now/> })}
            <nav class="pager" aria-label=tr.t("audit.pages")>
                {(!query.after.is_empty()).then(|| view! {
                    <a href=format!("/audit?{}", first.to_query_string()) data-testid="first-page">{tr.t("audit.first_page")}</a>
                })}
                {next.map(|href| view! { <a href=href rel="next" data-testid="next-page">{tr.t("audit.next_page")}</a> })}
            </nav>
        </section>
    }
}

#[component]
fn Verified(check: Option<ChainCheck>, now: i64) -> impl IntoView {
    let tr = use_tr();
    match check {
        None => view! { <span data-testid="verified">{tr.t("audit.not_verified")}</span> }.into_any(),
        Some(c) => {
            // The sentence of `ChainCheck::describe`, in the page's language.
            let ago = tr.span(now - c.checked_at_ms);
            let text = match &c.problem {
                None => {
                    let (n, at) = (grouped(c.up_to.max(0) as u64), tr.time(c.checked_at_ms));
                    let checkpoints = c.checkpoints.to_string();
                    let values: [(&str, &str); 4] =
                        [("n", &n), ("at", &at), ("checkpoints", &checkpoints), ("ago", &ago)];
                    tr.f("audit.verified_ok", &values)
                }
                Some((seq, why)) => {
                    let seq = seq.to_string();
                    let values: [(&str, &str); 3] = [("seq", &seq), ("why", why), ("ago", &ago)];
                    tr.f("audit.verified_broken", &values)
                }
            };
            view! {
                <span data-testid="verified" class=if c.problem.is_some() { "error" } else { "" }>{text}</span>
            }
            .into_any()
        }
    }
}

#[component]
fn HitTable(hits: Vec<AuditHit>, now: i64) -> impl IntoView {
    let tr = use_tr();
    view! {
        <div class="table-wrap">
            <table class="table audit-results">
                <thead><tr>
                    <th scope="col">{tr.t("audit.col_when")}</th><th scope="col">{tr.t("audit.col_agent")}</th><th scope="col">{tr.t("audit.col_tool")}</th>
                    <th scope="col">{tr.t("audit.col_decision")}</th><th scope="col">{tr.t("audit.col_by")}</th><th scope="col">{tr.t("audit.col_what")}</th>
                </tr></thead>
                <tbody>
                    {hits.into_iter().map(|h| {
                        let by = h.source.clone().map(|s| match &h.reviewer {
                            Some(r) if s == "reviewer" || s == "override" => {
                                tr.f("audit.by_person", &[("source", source_text(tr, &s).as_str()), ("name", r.as_str())])
                            }
                            _ => source_text(tr, &s),
                        }).unwrap_or_else(|| tr.who(&h.actor));
                        view! {
                            <tr data-testid="audit-row">
                                <td>
                                    <time title=tr.time(h.at_ms)>{tr.time(h.at_ms)}</time>
                                    <div class="muted small">{tr.f("audit.row_meta", &[("seq", h.seq.to_string().as_str()), ("ago", tr.span(now - h.at_ms).as_str())])}</div>
                                </td>
                                <td>{h.agent.clone().unwrap_or_default()}</td>
                                <td>{h.tool.clone().map(|t| view! { <code>{t}</code> })}</td>
                                <td>{h.status.clone().map(|s| view! { <span class=format!("badge status-{s}")>{tr.word("status", &s)}</span> })}
                                    {h.layer.clone().map(|l| view! { <div class="muted small">{tr.f("audit.blocked_by", &[("layer", tr.word("layer", &l))])}</div> })}</td>
                                <td>{by}</td>
                                <td>
                                    <span data-testid="audit-summary">{h.summary.clone()}</span>
                                    <div class="links small">
                                        <code class="muted">{h.kind.clone()}</code>
                                        {h.session.clone().map(|s| view! {
                                            " · " <a href=format!("/audit/sessions/{}", crate::api::encode(&s)) data-testid="trace-link">{tr.f("audit.session_link", &[("id", s.as_str())])}</a>
                                        })}
                                        {h.trace.clone().map(|t| view! {
                                            " · " <a href=format!("/audit/traces/{}", crate::api::encode(&t))>{tr.f("audit.trace_link", &[("id", t.as_str())])}</a>
                                        })}
                                        {h.call_id.clone().map(|c| view! {
                                            " · " <a href=format!("/calls/{c}")>{tr.t("audit.call_link")}</a>
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
