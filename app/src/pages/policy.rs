//! The policy page (admins): the policy in force and its text, an editor that checks,
//! applies or replays a change (problems shown at their lines), the history of changes
//! with their diffs, and rolling back. The replay page shows what a proposed policy would
//! have done to the recorded calls of a period.

use crate::api::{
    error_text_in, get_policy, replay_policy, Facet, PolicyChangeView, PolicyCheck, PolicyPage, ReplayReport,
    CSRF_FIELD,
};
use crate::components::diff::DiffLines;
use crate::components::post::PostForm;
use crate::components::refresh::ReloadOn;
use crate::components::shell::{use_session, Guarded};
use crate::i18n::{use_tr, Tr};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

#[component]
pub fn Policy() -> impl IntoView {
    let tr = use_tr();
    view! {
        <Title text=tr.t("policy.title")/>
        <Guarded path="/admin/policy">
            <p class="crumbs"><a href="/admin">{tr.t("policy.crumb_admin")}</a></p>
            <h1>{tr.t("policy.title")}</h1>
            <ReloadOn kinds=vec!["policy_changed".into()] ask=true/>
            <PolicyLoader/>
        </Guarded>
    }
}

#[component]
fn PolicyLoader() -> impl IntoView {
    let tr = use_tr();
    let csrf = use_session().csrf_token;
    let page = Resource::new(|| (), |_| get_policy());
    view! {
        <Suspense fallback=move || view! { <p class="muted">{tr.t("policy.loading")}</p> }>
            {move || {
                let csrf = csrf.clone();
                Suspend::new(async move {
                    match page.await {
                        Ok(p) => view! { <PolicyView p csrf tr/> }.into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text_in(tr, &e)}</p> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

#[component]
fn PolicyView(p: PolicyPage, csrf: String, tr: Tr) -> impl IntoView {
    let current = p.changes.first().cloned();
    let now = p.now_ms;
    view! {
        <section class="card" aria-labelledby="in-force-h" data-testid="policy-in-force">
            <h2 id="in-force-h">{tr.t("policy.in_force_heading")}</h2>
            <p>
                <strong>{p.name.clone()}</strong>" "<code data-testid="policy-version">{p.version.clone()}</code>
            </p>
            {current.map(|c| view! {
                <p class="muted">{tr.f("policy.since", &[
                    ("at", &tr.time(c.at_ms)),
                    ("ago", &tr.span(now - c.at_ms)),
                    ("who", &tr.who(&c.actor)),
                    ("via", via_text(tr, &c.via)),
                ])}</p>
            })}
            <p class="muted small">{tr.f("policy.file_note", &[("file", &p.file)])}</p>
        </section>
        <section class="card" aria-labelledby="edit-h">
            <h2 id="edit-h">{tr.t("policy.change_heading")}</h2>
            <PolicyEditor csrf=csrf.clone() source=p.source.clone()/>
        </section>
        <section class="card" aria-labelledby="history-h" data-testid="policy-history">
            <h2 id="history-h">{tr.t("policy.history_heading")}</h2>
            <ol class="policy-history">
                {p.changes.into_iter().enumerate().map(|(i, c)| view! { <Change c current=i == 0 csrf=csrf.clone() tr/> }).collect_view()}
            </ol>
        </section>
    }
}

#[component]
fn Change(c: PolicyChangeView, current: bool, csrf: String, tr: Tr) -> impl IntoView {
    let added = c.diff.iter().filter(|(t, _)| *t == '+').count();
    let removed = c.diff.iter().filter(|(t, _)| *t == '-').count();
    let summary = match &c.previous {
        None => tr.t("policy.first_version").to_string(),
        Some(_) if c.diff.is_empty() => tr.t("policy.text_not_kept").to_string(),
        Some(_) => tr.f(
            "policy.lines_changed",
            &[("added", &added.to_string()), ("removed", &removed.to_string())],
        ),
    };
    let version = c.version.clone();
    view! {
        <li data-testid="policy-change" data-version=c.version.clone()>
            <p>
                <time>{tr.time(c.at_ms)}</time>
                " · "<strong>{c.name.clone().unwrap_or_default()}</strong>" "<code>{c.version.clone()}</code>
                {tr.f("policy.by_via", &[("who", &tr.who(&c.actor)), ("via", via_text(tr, &c.via))])}
                {current.then(|| view! { " · "<span class="badge">{tr.t("policy.in_force_badge")}</span> })}
            </p>
            {c.note.clone().map(|n| view! { <p class="muted">{format!("“{n}”")}</p> })}
            {(!c.diff.is_empty()).then(|| view! {
                <details>
                    <summary>{tr.f("policy.changes_before", &[("summary", &summary)])}</summary>
                    <DiffLines lines=c.diff.clone()/>
                </details>
            })}
            {(c.diff.is_empty()).then(|| view! { <p class="muted small">{summary}</p> })}
            {(!current && c.kept).then(|| view! {
                <PostForm action="/api/policy/rollback".to_string() class="inline".to_string() notice="policy-message".to_string()>
                    <input type="hidden" name=CSRF_FIELD value=csrf/>
                    <input type="hidden" name="note" value=format!("back to {version}")/>
                    <input type="hidden" name="version" value=version/>
                    <button type="submit" data-testid="rollback">{tr.t("policy.rollback")}</button>
                </PostForm>
            })}
        </li>
    }
}

/// The policy text: check it, apply it, or see what it would have done (a replay).
/// Without JavaScript the form applies the text as posted.
#[island]
fn PolicyEditor(csrf: String, source: String) -> impl IntoView {
    let tr = use_tr();
    let text = RwSignal::new(source.clone());
    let note = RwSignal::new(String::new());
    let since = RwSignal::new("7d".to_string());
    let result = RwSignal::new(None::<PolicyCheck>);
    let busy = RwSignal::new(false);
    let csrf = StoredValue::new(csrf);
    // Check, apply or keep for a replay; the answer's problems show under the text.
    let send = move |what: &'static str| {
        #[cfg(feature = "hydrate")]
        {
            use crate::components::refresh;
            if busy.get_untracked() {
                return;
            }
            busy.set(true);
            let (csrf, source, note) = (csrf.get_value(), text.get_untracked(), note.get_untracked());
            let body = crate::components::post::encode(&[(CSRF_FIELD, &csrf), ("source", &source), ("note", &note)]);
            let page_busy = refresh::busy();
            leptos::task::spawn_local(async move {
                let _page_busy = page_busy;
                let url = format!("/api/policy/{what}");
                let answer = crate::components::post::call::<PolicyCheck>(&url, Some(body)).await;
                busy.set(false);
                let check = answer.unwrap_or_else(|e| PolicyCheck {
                    ok: false,
                    message: error_text_in(tr, &e),
                    problems: Vec::new(),
                    version: None,
                });
                match (what, check.ok) {
                    ("apply", true) => refresh::reload_with(crate::components::refresh::Flash::new(
                        "policy-message",
                        true,
                        check.message,
                    )),
                    ("draft", true) => refresh::go(&format!(
                        "/admin/policy/replay?v={}&since={}",
                        crate::api::encode(check.version.as_deref().unwrap_or_default()),
                        crate::api::encode(&since.get_untracked())
                    )),
                    _ => result.set(Some(check)),
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (what, csrf, tr);
    };
    let load_file = move |e: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let file = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                .and_then(|i| i.files())
                .and_then(|f| f.get(0));
            if let Some(file) = file {
                leptos::task::spawn_local(async move {
                    if let Ok(t) = wasm_bindgen_futures::JsFuture::from(file.text()).await {
                        text.set(t.as_string().unwrap_or_default());
                        result.set(None);
                    }
                });
            }
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = e;
    };
    let submit = move |e: leptos::ev::SubmitEvent| {
        e.prevent_default();
        send("apply");
    };
    view! {
        <form method="post" action="/api/policy/apply" class="policy-editor" data-testid="policy-editor" on:submit=submit>
            <input type="hidden" name=CSRF_FIELD value=csrf.get_value()/>
            <label for="policy-source">{tr.t("policy.source_label")}</label>
            <textarea id="policy-source" name="source" class="code" rows="24" spellcheck="false" data-testid="policy-source"
                prop:value=move || text.get() on:input=move |e| { text.set(event_target_value(&e)); result.set(None); }>{source}</textarea>
            <label for="policy-file">{tr.t("policy.file_label")}</label>
            <input id="policy-file" type="file" accept=".toml,text/plain" on:change=load_file/>
            <label for="policy-note">{tr.t("policy.note_label")}</label>
            <input id="policy-note" name="note" maxlength="500" autocomplete="off" prop:value=move || note.get()
                on:input=move |e| note.set(event_target_value(&e))/>
            <div class="actions">
                <button type="button" data-testid="policy-check" disabled=move || busy.get() on:click=move |_| send("check")>{tr.t("policy.check")}</button>
                <button type="submit" class="primary" data-testid="policy-apply" disabled=move || busy.get()>{tr.t("policy.apply")}</button>
                <label for="replay-since" class="sr-only">{tr.t("policy.replay_over")}</label>
                <select id="replay-since" on:change=move |e| since.set(event_target_value(&e))>
                    <option value="24h">{tr.t("policy.last_24h")}</option>
                    <option value="7d" selected>{tr.t("policy.last_7d")}</option>
                    <option value="30d">{tr.t("policy.last_30d")}</option>
                </select>
                <button type="button" data-testid="policy-replay" disabled=move || busy.get() on:click=move |_| send("draft")>
                    {tr.t("policy.what_changed")}
                </button>
            </div>
        </form>
        {move || result.get().map(|r| view! { <CheckResult r tr/> })}
    }
}

#[component]
fn CheckResult(r: PolicyCheck, tr: Tr) -> impl IntoView {
    let (class, role) = if r.ok { ("notice", "status") } else { ("error", "alert") };
    view! {
        <div class="policy-result" data-testid="policy-result">
            <p class=class role=role>{r.message}</p>
            {(!r.problems.is_empty()).then(|| view! {
                <ul class="problems">
                    {r.problems.into_iter().map(|p| view! {
                        <li data-testid="policy-problem">
                            <strong>{p.line.map(|l| tr.f("policy.problem_line", &[("line", &l.to_string())])).unwrap_or_default()}</strong>
                            {p.message}
                            <span class="muted">{format!(" ({})", p.location)}</span>
                            {p.text.map(|t| view! { <pre class="code line">{t}</pre> })}
                        </li>
                    }).collect_view()}
                </ul>
            })}
        </div>
    }
}

#[component]
pub fn Replay() -> impl IntoView {
    let tr = use_tr();
    view! {
        <Title text=tr.t("policy.replay_title")/>
        <Guarded path="/admin/policy/replay">
            <p class="crumbs"><a href="/admin/policy">{tr.t("policy.crumb_policy")}</a></p>
            <h1>{tr.t("policy.what_changed")}</h1>
            <ReplayLoader/>
        </Guarded>
    }
}

#[component]
fn ReplayLoader() -> impl IntoView {
    let tr = use_tr();
    let q = use_query_map();
    let args = move || {
        q.with(|q| {
            (
                q.get("v").unwrap_or_default(),
                q.get("since").unwrap_or_else(|| "7d".into()),
                q.get("agent").unwrap_or_default(),
            )
        })
    };
    let report = Resource::new(args, |(v, since, agent)| replay_policy(v, since, agent));
    let (v, since, agent) = args();
    view! {
        <form method="get" action="/admin/policy/replay" class="card filters" aria-label=tr.t("policy.replay_period")>
            <input type="hidden" name="v" value=v/>
            <label for="r-since">{tr.t("policy.replay_since")}</label>
            <input id="r-since" name="since" value=since placeholder="7d, 24h, 2026-12-01"/>
            <label for="r-agent">{tr.t("policy.replay_agent_label")}</label>
            <input id="r-agent" name="agent" value=agent placeholder=tr.t("policy.every_agent")/>
            <button type="submit">{tr.t("policy.replay")}</button>
        </form>
        <Suspense fallback=move || view! { <p class="muted">{tr.t("policy.replaying")}</p> }>
            {move || Suspend::new(async move {
                match report.await {
                    Ok(r) => view! { <ReplayView r tr/> }.into_any(),
                    Err(e) => view! { <p class="error" role="alert" data-testid="replay-error">{error_text_in(tr, &e)}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn ReplayView(r: ReplayReport, tr: Tr) -> impl IntoView {
    let n = move |x: u64| tr.number(i64::try_from(x).unwrap_or(i64::MAX));
    let agent = if r.agent.is_empty() {
        String::new()
    } else {
        tr.f("policy.replay_of_agent", &[("agent", &r.agent)])
    };
    let reasons = match r.reasons_changed {
        0 => String::new(),
        x => tr.f("policy.replay_reasons", &[("n", &n(x))]),
    };
    let summary = tr.f(
        "policy.replay_summary",
        &[
            ("replayed", &n(r.replayed)),
            ("since", &tr.time(r.since_ms)),
            ("until", &tr.time(r.until_ms)),
            ("agent", &agent),
            ("name", &r.proposed_name),
            ("version", &r.proposed_version),
            ("seconds", &format!("{:.1}", r.elapsed_ms as f64 / 1000.0)),
            ("changed", &n(r.changed)),
            ("reasons", &reasons),
        ],
    );
    let facets = move |title: &'static str, f: Vec<Facet>, layers: bool| {
        (!f.is_empty()).then(|| {
            view! {
                <div>
                    <h3>{title}</h3>
                    <ul>{f.into_iter().map(|f| {
                        let value = if layers { tr.word("layer", &f.value).to_string() } else { f.value.clone() };
                        view! { <li>{format!("{value} ({})", n(f.count))}</li> }
                    }).collect_view()}</ul>
                </div>
            }
        })
    };
    view! {
        <section class="card" data-testid="replay-report">
            <p data-testid="replay-summary">{summary}</p>
            {(!r.shifts.is_empty()).then(|| view! {
                <table class="table">
                    <thead><tr>
                        <th scope="col">{tr.t("policy.was")}</th>
                        <th scope="col">{tr.t("policy.would_be")}</th>
                        <th scope="col">{tr.t("policy.calls")}</th>
                    </tr></thead>
                    <tbody>
                        {r.shifts.iter().map(|s| view! {
                            <tr data-testid="replay-shift">
                                <td>{tr.word("status", &s.from).to_string()}</td>
                                <td>{tr.word("status", &s.to).to_string()}</td>
                                <td class="num">{n(s.count)}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            })}
            <div class="facets">
                {facets(tr.t("policy.by_tool"), r.tools.clone(), false)}
                {facets(tr.t("policy.by_layer"), r.layers.clone(), true)}
                {facets(tr.t("policy.by_rule"), r.rules.clone(), false)}
            </div>
            {(r.redacted_only > 0 || r.without_facts > 0).then(|| view! {
                <p class="muted small">{tr.f("policy.replay_caveats", &[
                    ("redacted", &n(r.redacted_only)),
                    ("lexical", &n(r.without_facts)),
                ])}</p>
            })}
        </section>
        {(!r.examples.is_empty()).then(|| view! {
            <section class="card" aria-labelledby="examples-h">
                <h2 id="examples-h">{tr.t("policy.examples")}</h2>
                <ul class="replay-examples">
                    {r.examples.into_iter().map(|e| view! {
                        <li data-testid="replay-example">
                            <a href=format!("/calls/{}", e.call_id)>{e.tool.clone()}</a>
                            {format!(
                                " · {} · {} · {} → {}",
                                e.agent,
                                tr.time(e.at_ms),
                                tr.word("status", &e.from),
                                tr.word("status", &e.to)
                            )}
                            {e.layer.clone().map(|l| format!(
                                " ({}{})",
                                tr.word("layer", &l),
                                e.rule.clone().map(|r| format!(", {r}")).unwrap_or_default()
                            ))}
                            <div class="muted small">{e.reason.clone()}</div>
                        </li>
                    }).collect_view()}
                </ul>
            </section>
        })}
    }
}

/// How a change of the policy came (`start`, `cli`, `signal`, `page`, `rollback`), as people
/// read it (the wire value when unknown).
fn via_text(tr: Tr, via: &str) -> &str {
    match via {
        "start" => tr.t("policy.via_start"),
        "cli" => tr.t("policy.via_cli"),
        "signal" => tr.t("policy.via_signal"),
        "page" => tr.t("policy.via_page"),
        "rollback" => tr.t("policy.via_rollback"),
        other => other,
    }
}
