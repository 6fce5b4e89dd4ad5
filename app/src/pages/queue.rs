//! The live queue: one page of held calls (filters, order and page in the URL) with the
//! true counts. Held calls arrive and leave through the event hub without a reload: new
//! ones that pass the filters are added below the page, so what a reviewer is reading
//! does not move; calls decided elsewhere stay in place, marked with who decided.
//!
//! The server reads the page; the list itself is one island (it changes live).
//! Over 500 lines: the table, its filters, batch bar, keyboard and live merging share the
//! island's signals; each part is a component below.

use crate::api::{
    error_text_in, get_queue, DecisionOutcome, Facet, LiveEvent, QueueItem, QueueQuery, QueueSnapshot, SessionInfo,
    Verdict,
};
use crate::components::clock::{countdown, start_clock, Clock};
use crate::components::live::{on_live_event, use_live};
use crate::components::refresh;
use crate::components::shell::{use_session, Guarded};
use crate::i18n::{use_tr, Tr};
use leptos::prelude::*;
use leptos_meta::Title;
use std::collections::BTreeSet;

#[component]
pub fn Queue() -> impl IntoView {
    view! {
        <Guarded path="/queue">
            <QueueLoader/>
        </Guarded>
    }
}

#[component]
fn QueueLoader() -> impl IntoView {
    let tr = use_tr();
    let SessionInfo {
        user, csrf_token: csrf, ..
    } = use_session();
    let can_decide = user.is_some_and(|u| u.role.can_decide());
    let params = leptos_router::hooks::use_query_map();
    let query = Memo::new(move |_| {
        params.with(|p| QueueQuery {
            tool: p.get("tool").unwrap_or_default(),
            agent: p.get("agent").unwrap_or_default(),
            risk: p.get("risk").unwrap_or_default(),
            session: p.get("session").unwrap_or_default(),
            sort: p.get("sort").unwrap_or_default(),
            page: p.get("page").and_then(|v| v.parse().ok()).unwrap_or(0),
        })
    });
    let snapshot = Resource::new(move || query.get(), get_queue);
    view! {
        <Suspense fallback=move || view! { <p class="muted">{tr.t("queue.loading")}</p> }>
            {move || {
                let csrf = csrf.clone();
                Suspend::new(async move {
                match snapshot.await {
                    Ok(s) => view! {
                        <Title text=title(tr, s.total)/>
                        <QueueView snapshot=s query=query.get_untracked() csrf can_decide/>
                    }.into_any(),
                    Err(e) => view! { <Title text=tr.t("queue.title")/><p class="error" role="alert">{error_text_in(tr, &e)}</p> }.into_any(),
                }
            })}}
        </Suspense>
    }
}

/// The tab's title: how many calls wait.
fn title(tr: Tr, total: u64) -> String {
    match total {
        0 => tr.t("queue.title").to_string(),
        n => tr.f("queue.title_count", &[("n", &n.to_string())]),
    }
}

/// A queue entry and, once known, how it ended.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    item: QueueItem,
    /// (status, decided by) once decided by anyone.
    decided: Option<(String, String)>,
}

/// Calls that arrive live are added below the page, up to this many; beyond it the page
/// says how many more arrived instead of growing without end.
const LIVE_ROWS: usize = 100;

fn waiting_text(tr: Tr, total: u64) -> String {
    match total {
        0 => tr.t("queue.waiting_none").to_string(),
        1 => tr.t("queue.waiting_one").to_string(),
        n => tr.f("queue.waiting_many", &[("n", &tr.number(n as i64))]),
    }
}

#[island]
fn QueueView(snapshot: QueueSnapshot, query: QueueQuery, csrf: String, can_decide: bool) -> impl IntoView {
    let tr = use_tr();
    let clock: Clock = start_clock(snapshot.now_ms);
    let page_size = snapshot.page_size.max(1) as usize;
    let first = snapshot.page as usize * page_size;
    let rows = RwSignal::new(
        snapshot
            .items
            .into_iter()
            .map(|item| Row { item, decided: None })
            .collect::<Vec<_>>(),
    );
    let shown_at_load = rows.with_untracked(Vec::len);
    // Counts from the snapshot, kept current by the events that follow it.
    let base_seq = StoredValue::new(snapshot.seq);
    let total = RwSignal::new(snapshot.total);
    let matching = RwSignal::new(snapshot.matching);
    let more_arrived = RwSignal::new(0u64);
    let overrides = RwSignal::new(snapshot.overrides_awaiting);
    let arrived = RwSignal::new(None::<QueueItem>);
    let selected = RwSignal::new(BTreeSet::<String>::new());
    let cursor = RwSignal::new(0usize);
    let help = RwSignal::new(false);
    let query = StoredValue::new(query);

    // Reload the page (on connect and when the hub says events were missed), keeping rows
    // already marked as decided.
    let reload = move || {
        let url = query.get_value().api_url();
        leptos::task::spawn_local(async move {
            #[cfg(feature = "hydrate")]
            if let Ok(s) = crate::components::post::call::<QueueSnapshot>(&url, None).await {
                base_seq.set_value(s.seq);
                total.set(s.total);
                overrides.set(s.overrides_awaiting);
                matching.set(s.matching);
                more_arrived.set(0);
                rows.update(|rs| {
                    let fresh: Vec<Row> = s.items.into_iter().map(|item| Row { item, decided: None }).collect();
                    rs.retain(|r| r.decided.is_some() && !fresh.iter().any(|f| f.item.id == r.item.id));
                    let mut merged = fresh;
                    merged.append(rs);
                    *rs = merged;
                });
            }
            #[cfg(not(feature = "hydrate"))]
            let _ = url;
        });
    };
    on_live_event(move |e| {
        let fresh = e.seq > base_seq.get_value();
        match &e.event {
            LiveEvent::Hello(_) | LiveEvent::Resync(_) => reload(),
            LiveEvent::CallPending(item) => {
                let item = item.clone();
                if fresh {
                    total.update(|t| *t += 1);
                }
                if !query.with_value(|q| q.matches(&item)) {
                    return;
                }
                if fresh {
                    matching.update(|m| *m += 1);
                }
                arrived.set(Some(item.clone()));
                rows.update(|rs| {
                    if rs.iter().any(|r| r.item.id == item.id) {
                        return;
                    }
                    if rs.len() < shown_at_load + LIVE_ROWS {
                        rs.push(Row { item, decided: None });
                    } else {
                        more_arrived.update(|n| *n += 1);
                    }
                });
            }
            LiveEvent::CallDecided(d) => {
                if fresh {
                    total.update(|t| *t = t.saturating_sub(1));
                    if query.with_value(|q| q.matches_fields(&d.tool, &d.agent, &d.risk, Some(&d.session_id))) {
                        matching.update(|m| *m = m.saturating_sub(1));
                    }
                }
                rows.update(|rs| {
                    if let Some(r) = rs.iter_mut().find(|r| r.item.id == d.id) {
                        r.decided = Some((
                            d.status.clone(),
                            d.decided_by.clone().unwrap_or_else(|| tr.t("queue.system").into()),
                        ));
                    }
                });
                selected.update(|s| {
                    s.remove(&d.id);
                });
            }
            LiveEvent::CallUpdated(u) => {
                rows.update(|rs| {
                    if let Some(r) = rs.iter_mut().find(|r| r.item.id == u.id) {
                        r.item.approvals = u.approvals.clone();
                        r.item.approvers_required = u.approvers_required;
                    }
                });
            }
            LiveEvent::CallEscalated(x) => {
                arrived.set(Some(x.item.clone()));
                rows.update(|rs| {
                    if let Some(r) = rs.iter_mut().find(|r| r.item.id == x.item.id) {
                        r.item.escalated = true;
                    }
                });
            }
            LiveEvent::OverridesChanged(o) => overrides.set(o.awaiting),
            _ => {}
        }
    });

    // The tab's title follows the count (the server wrote the first one).
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| document().set_title(&format!("{} · Airlock", title(tr, total.get()))));

    // Keyboard: j/k move, Enter opens, x selects, ? shows the keys.
    #[cfg(feature = "hydrate")]
    {
        use leptos::ev;
        use wasm_bindgen::JsCast;
        let handle = window_event_listener(ev::keydown, move |e: web_sys::KeyboardEvent| {
            let tag = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
                .map(|el| el.tag_name())
                .unwrap_or_default();
            let typing = matches!(tag.as_str(), "INPUT" | "TEXTAREA" | "SELECT");
            // Enter on a focused link or button is that element's own action (a keyboard
            // user following a link must not open the cursor's call instead).
            let own_enter = e.key() == "Enter" && matches!(tag.as_str(), "A" | "BUTTON" | "SUMMARY");
            if typing || own_enter || e.ctrl_key() || e.meta_key() || e.alt_key() {
                return;
            }
            let n = rows.with_untracked(Vec::len);
            match e.key().as_str() {
                "j" if n > 0 => cursor.update(|c| *c = (*c + 1).min(n - 1)),
                "k" => cursor.update(|c| *c = c.saturating_sub(1)),
                "Enter" => {
                    if let Some(r) = rows.with_untracked(|v| v.get(cursor.get_untracked()).cloned()) {
                        refresh::go(&format!("/calls/{}", r.item.id));
                    }
                }
                "x" if can_decide => {
                    if let Some(r) = rows.with_untracked(|v| v.get(cursor.get_untracked()).cloned()) {
                        if r.decided.is_none() {
                            selected.update(|s| {
                                if !s.remove(&r.item.id) {
                                    s.insert(r.item.id.clone());
                                }
                            });
                        }
                    }
                }
                "?" => help.update(|h| *h = !*h),
                "Escape" => help.set(false),
                _ => return,
            }
            e.prevent_default();
        });
        on_cleanup(move || handle.remove());
    }

    let q = query.get_value();
    let page = snapshot.page;
    let pages = snapshot.matching.div_ceil(page_size as u64).max(1);
    let link = move |page: u32| {
        let mut q = query.get_value();
        q.page = page;
        match q.to_query_string() {
            s if s.is_empty() => "/queue".to_string(),
            s => format!("/queue?{s}"),
        }
    };
    let range = if snapshot.matching == 0 {
        String::new()
    } else {
        tr.f(
            "queue.range",
            &[
                ("from", &tr.number(first as i64 + 1)),
                ("to", &tr.number((first + shown_at_load) as i64)),
                ("total", &tr.number(snapshot.matching as i64)),
            ],
        )
    };
    let pager = (pages > 1).then(|| {
        view! {
            <nav class="pager" aria-label=tr.t("queue.pages") data-testid="pager">
                {(page > 0).then(|| view! { <a href=link(page - 1) rel="prev">{tr.t("queue.previous")}</a> })}
                <span>{tr.f(
                    "queue.page_of",
                    &[("page", &tr.number(i64::from(page) + 1)), ("pages", &tr.number(pages as i64)), ("range", &range)],
                )}</span>
                {(u64::from(page) + 1 < pages).then(|| view! { <a href=link(page + 1) rel="next">{tr.t("queue.next")}</a> })}
            </nav>
        }
    });
    let active = [&q.tool, &q.agent, &q.risk, &q.session]
        .iter()
        .filter(|v| !v.is_empty())
        .count();
    let facets = (snapshot.tools, snapshot.agents, snapshot.risks);

    view! {
        <div class="page-head">
            <h1>{tr.t("queue.heading")}</h1>
            <p class="muted" data-testid="queue-count" aria-live="polite">
                {move || waiting_text(tr, total.get())}
                {move || query.with_value(QueueQuery::filtered).then(|| {
                    tr.f("queue.matching", &[("n", &tr.number(matching.get() as i64))])
                })}
            </p>
            <Show when=move || { overrides.get() > 0 }>
                <p data-testid="overrides-awaiting-count">
                    <a href="/oncall">{move || match overrides.get() {
                        1 => tr.t("queue.overrides_one").to_string(),
                        n => tr.f("queue.overrides_many", &[("n", &tr.number(n as i64))]),
                    }}</a>
                </p>
            </Show>
            <NotifyToggle arrived/>
        </div>
        <QueueFilters facets query=q active/>
        {can_decide.then(|| view! { <BatchBar selected csrf=csrf.clone()/> })}
        <section aria-labelledby="pending-h">
            <h2 id="pending-h" class="sr-only">{tr.t("queue.waiting_heading")}</h2>
            <Show when=move || rows.with(Vec::is_empty)>
                <p class="card muted" data-testid="queue-empty">
                    {move || if total.get() == 0 { tr.t("queue.empty") } else { tr.t("queue.empty_filtered") }}
                </p>
            </Show>
            <ol class="queue" data-testid="queue" start=(first + 1).to_string()>
                <For
                    each=move || rows.get().into_iter().enumerate()
                    key=|(i, r)| (*i, r.item.id.clone(), r.decided.clone(), r.item.approvals.len(), r.item.escalated)
                    children=move |(i, r)| view! { <QueueRow row=r index=i cursor selected clock can_decide/> }
                />
            </ol>
            <Show when=move || { more_arrived.get() > 0 }>
                <p class="card muted" data-testid="more-arrived">
                    {move || tr.f("queue.more_arrived", &[("n", &tr.number(more_arrived.get() as i64))])}
                    <a href=link(page)>{tr.t("queue.reload")}</a>
                </p>
            </Show>
            {pager}
        </section>
        <Show when=move || help.get()>
            <KeyHelp help/>
        </Show>
        <LiveFooter/>
    }
}

/// A facet's value as its select shows it: risk levels in words, tools and agents as named.
fn facet_text<'a>(tr: Tr, name: &str, value: &'a str) -> &'a str {
    if name == "risk" {
        tr.word("risk", value)
    } else {
        value
    }
}

/// Filters and order as a plain GET form (works without JavaScript); with JavaScript a
/// change applies at once. On a phone the form is folded behind one button.
#[component]
fn QueueFilters(facets: (Vec<Facet>, Vec<Facet>, Vec<Facet>), query: QueueQuery, active: usize) -> impl IntoView {
    let tr = use_tr();
    let (tools, agents, risks) = facets;
    let current = StoredValue::new(query.clone());
    let session = RwSignal::new(query.session.clone());
    let go = move |edit: &dyn Fn(&mut QueueQuery)| {
        let mut q = current.get_value();
        edit(&mut q);
        q.page = 0;
        let s = q.to_query_string();
        let url = if s.is_empty() {
            "/queue".to_string()
        } else {
            format!("/queue?{s}")
        };
        refresh::go(&url);
    };
    let select = move |label: &'static str, name: &'static str, facets: Vec<Facet>, value: String| {
        let on_change = move |e: leptos::ev::Event| {
            let v = event_target_value(&e);
            go(&|q: &mut QueueQuery| match name {
                "tool" => q.tool = v.clone(),
                "agent" => q.agent = v.clone(),
                _ => q.risk = v.clone(),
            });
        };
        let id = format!("f-{name}");
        // A value asked for in the URL stays selectable even when no held call has it.
        let missing = (!value.is_empty() && !facets.iter().any(|f| f.value == value)).then(|| value.clone());
        view! {
            <label for=id.clone()>{label}</label>
            <select id=id name=name on:change=on_change>
                <option value="">{tr.t("queue.all")}</option>
                {missing.map(|v| {
                    let text = tr.f("queue.facet_option", &[("value", facet_text(tr, name, &v)), ("n", "0")]);
                    view! { <option value=v.clone() selected=true>{text}</option> }
                })}
                {facets.into_iter().map(|f| {
                    let selected = f.value == value;
                    let text = tr.f(
                        "queue.facet_option",
                        &[("value", facet_text(tr, name, &f.value)), ("n", &tr.number(f.count as i64))],
                    );
                    view! { <option value=f.value.clone() selected=selected>{text}</option> }
                }).collect_view()}
            </select>
        }
    };
    let sort_change = move |e: leptos::ev::Event| {
        let v = event_target_value(&e);
        go(&|q: &mut QueueQuery| q.sort = v.clone());
    };
    let submit = move |e: leptos::ev::SubmitEvent| {
        e.prevent_default();
        let v = session.get_untracked().trim().to_string();
        go(&|q: &mut QueueQuery| q.session = v.clone());
    };
    let sort = query.sort.clone();
    let summary = match active {
        0 => tr.t("queue.filters").to_string(),
        n => tr.f("queue.filters_on", &[("n", &n.to_string())]),
    };
    view! {
        <details class="card fold" data-testid="filters">
            <summary>{summary}</summary>
            <form class="filters" method="get" action="/queue" aria-label=tr.t("queue.filter_label") on:submit=submit>
                {select(tr.t("queue.f_tool"), "tool", tools, query.tool.clone())}
                {select(tr.t("queue.f_agent"), "agent", agents, query.agent.clone())}
                {select(tr.t("queue.f_risk"), "risk", risks, query.risk.clone())}
                <label for="f-session">{tr.t("queue.f_session")}</label>
                <input id="f-session" name="session" type="search" placeholder=tr.t("queue.session_placeholder")
                    prop:value=move || session.get() on:input=move |e| session.set(event_target_value(&e))/>
                <label for="f-sort">{tr.t("queue.f_sort")}</label>
                <select id="f-sort" name="sort" on:change=sort_change>
                    <option value="oldest" selected=sort.is_empty() || sort == "oldest">{tr.t("queue.sort_oldest")}</option>
                    <option value="expiry" selected=sort == "expiry">{tr.t("queue.sort_expiry")}</option>
                    <option value="risk" selected=sort == "risk">{tr.t("queue.sort_risk")}</option>
                </select>
                <button type="submit">{tr.t("queue.apply")}</button>
                {(active > 0).then(|| view! { <a href="/queue">{tr.t("queue.clear")}</a> })}
            </form>
        </details>
    }
}

#[component]
fn QueueRow(
    row: Row,
    index: usize,
    cursor: RwSignal<usize>,
    selected: RwSignal<BTreeSet<String>>,
    clock: Clock,
    can_decide: bool,
) -> impl IntoView {
    let tr = use_tr();
    let item = row.item;
    let id = item.id.clone();
    let href = format!("/calls/{id}");
    let checked = {
        let id = id.clone();
        move || selected.with(|s| s.contains(&id))
    };
    let toggle = {
        let id = id.clone();
        move |_| {
            selected.update(|s| {
                if !s.remove(&id) {
                    s.insert(id.clone());
                }
            })
        }
    };
    let created = item.created_at_ms;
    let expires = item.expires_at_ms;
    let quorum = (item.approvers_required > 1).then(|| {
        tr.f(
            "queue.quorum",
            &[
                ("n", &item.approvals.len().to_string()),
                ("required", &item.approvers_required.to_string()),
            ],
        )
    });
    let decided = row.decided.clone();
    let is_decided = decided.is_some();
    let label = tr.f("queue.select_call", &[("tool", &item.tool), ("id", &id)]);
    view! {
        <li
            class="qrow"
            class:current=move || cursor.get() == index
            class:decided=is_decided
            data-call=id.clone()
            data-testid="queue-row"
        >
            {(can_decide && !is_decided).then(|| view! {
                <input type="checkbox" class="pick" aria-label=label.clone() prop:checked=checked on:change=toggle/>
            })}
            <div class="qmain">
                <a class="qtool" href=href>{item.tool.clone()}</a>
                <span class=format!("risk risk-{}", item.risk)>{tr.word("risk", &item.risk).to_string()}</span>
                {item.destructive.then(|| view! { <span class="tag warn">{tr.t("queue.destructive")}</span> })}
                {item.escalated.then(|| view! { <span class="tag escalated" data-testid="escalated">{tr.t("queue.escalated")}</span> })}
                {item.server.clone().map(|s| view! { <span class="tag">{format!("MCP {s}")}</span> })}
                <p class="why">
                    {item.rule.clone().map(|r| view! { <code>{r}</code>" · " })}
                    {item.reason.clone()}
                </p>
                <p class="meta muted">
                    {tr.f("queue.row_meta", &[("agent", &item.agent), ("session", &item.session_id)])}
                    {quorum.map(|q| view! { " · " <strong>{q}</strong> })}
                </p>
            </div>
            <div class="qtime">
                {match decided {
                    Some((status, by)) => view! {
                        <span class="decided-by" data-testid="decided-by">{tr.f(
                            "queue.decided_by",
                            &[("status", tr.word("status", &status)), ("who", &tr.who(&by))],
                        )}</span>
                    }.into_any(),
                    None => view! {
                        <span class="age">{move || tr.f("queue.ago", &[("span", &tr.span(clock.now_ms.get() - created))])}</span>
                        <span class="countdown">{move || countdown(tr, expires, clock.now_ms.get())}</span>
                    }.into_any(),
                }}
            </div>
        </li>
    }
}

#[component]
fn BatchBar(selected: RwSignal<BTreeSet<String>>, csrf: String) -> impl IntoView {
    let tr = use_tr();
    let reason = RwSignal::new(String::new());
    let csrf = StoredValue::new(csrf);
    // Each selected call is decided on its own; the answer says how each went.
    let run = Action::new_local(move |(verdict, why): &(Verdict, String)| {
        let ids: Vec<String> = selected.get_untracked().into_iter().collect();
        let mut fields = vec![
            (crate::api::CSRF_FIELD.to_string(), csrf.get_value()),
            ("verdict".to_string(), verdict.as_str().to_string()),
            ("reason".to_string(), why.clone()),
        ];
        fields.extend(ids.into_iter().enumerate().map(|(i, id)| (format!("ids[{i}]"), id)));
        async move {
            #[cfg(feature = "hydrate")]
            {
                let pairs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                let body = crate::components::post::encode(&pairs);
                crate::components::post::call::<Vec<DecisionOutcome>>("/api/calls/batch", Some(body)).await
            }
            #[cfg(not(feature = "hydrate"))]
            {
                let _ = fields;
                Err::<Vec<DecisionOutcome>, _>(crate::api::AppError::Unreachable)
            }
        }
    });
    let results = move || run.value().get();
    Effect::new(move |_| {
        if let Some(Ok(outs)) = run.value().get() {
            selected.update(|s| {
                for o in outs.iter().filter(|o| o.ok) {
                    s.remove(&o.id);
                }
            });
        }
    });
    let count = move || selected.with(BTreeSet::len);
    view! {
        <section class="card batch" class:idle=move || count() == 0 aria-label=tr.t("queue.batch_label") data-testid="batch-bar">
            <span>{move || tr.f("queue.selected", &[("n", &count().to_string())])}</span>
            <button
                type="button"
                class="approve"
                disabled=move || count() == 0 || run.pending().get()
                on:click=move |_| { run.dispatch((Verdict::Approve, String::new())); }
            >{tr.t("queue.approve_selected")}</button>
            <label for="batch-reason" class="sr-only">{tr.t("queue.batch_reason_label")}</label>
            <input
                id="batch-reason"
                placeholder=tr.t("queue.batch_reason_placeholder")
                prop:value=move || reason.get()
                on:input=move |e| reason.set(event_target_value(&e))
            />
            <button
                type="button"
                class="reject"
                disabled=move || count() == 0 || reason.with(|r| r.trim().is_empty()) || run.pending().get()
                on:click=move |_| { run.dispatch((Verdict::Reject, reason.get_untracked())); }
            >{tr.t("queue.reject_selected")}</button>
            {move || results().map(|r| match r {
                Ok(outs) => view! { <BatchResults outs/> }.into_any(),
                Err(e) => view! { <p class="error" role="alert">{error_text_in(tr, &e)}</p> }.into_any(),
            })}
        </section>
    }
}

#[component]
fn BatchResults(outs: Vec<DecisionOutcome>) -> impl IntoView {
    let tr = use_tr();
    let ok = outs.iter().filter(|o| o.ok).count();
    let failed = outs.len() - ok;
    view! {
        <div class="batch-results" role="status" data-testid="batch-results">
            <p>
                <strong>{tr.f("queue.batch_decided", &[("n", &ok.to_string())])}</strong>
                {(failed > 0).then(|| tr.f("queue.batch_failed", &[("n", &failed.to_string())]))}
            </p>
            <ul>
                {outs.into_iter().map(|o| view! {
                    <li class:error=!o.ok data-call=o.id.clone()>{format!("{}: {}", o.id, o.message)}</li>
                }).collect_view()}
            </ul>
        </div>
    }
}

/// Optional desktop notifications for new held calls (and escalations) while the tab is
/// in the background; the tab's title counts the waiting calls.
#[component]
fn NotifyToggle(arrived: RwSignal<Option<QueueItem>>) -> impl IntoView {
    let tr = use_tr();
    let enabled = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    {
        enabled.set(web_sys::Notification::permission() == web_sys::NotificationPermission::Granted);
        Effect::new(move |_| {
            let Some(item) = arrived.get() else { return };
            if enabled.get_untracked() && document().hidden() {
                let opts = web_sys::NotificationOptions::new();
                opts.set_body(&item.reason);
                let key = if item.escalated {
                    crate::i18n::tr_key("queue.notify_escalated")
                } else {
                    crate::i18n::tr_key("queue.notify_held")
                };
                let _ = web_sys::Notification::new_with_options(&tr.f(key, &[("tool", &item.tool)]), &opts);
            }
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = arrived;
    let ask = move |_| {
        #[cfg(feature = "hydrate")]
        {
            let cb = wasm_bindgen::closure::Closure::<dyn FnMut(wasm_bindgen::JsValue)>::new(
                move |p: wasm_bindgen::JsValue| {
                    enabled.set(p.as_string().as_deref() == Some("granted"));
                },
            );
            if let Ok(promise) = web_sys::Notification::request_permission() {
                let _ = promise.then(&cb);
            }
            cb.forget();
        }
    };
    view! {
        <button type="button" class="link notify" on:click=ask disabled=move || enabled.get()>
            {move || if enabled.get() { tr.t("queue.notify_on") } else { tr.t("queue.notify_ask") }}
        </button>
    }
}

#[component]
fn KeyHelp(help: RwSignal<bool>) -> impl IntoView {
    let tr = use_tr();
    view! {
        <div class="card keyhelp" role="dialog" aria-label=tr.t("queue.keys_label") data-testid="key-help">
            <h2>{tr.t("queue.keys_heading")}</h2>
            <dl class="facts">
                <dt><kbd>"j"</kbd>" / "<kbd>"k"</kbd></dt><dd>{tr.t("queue.key_move")}</dd>
                <dt><kbd>"Enter"</kbd></dt><dd>{tr.t("queue.key_open")}</dd>
                <dt><kbd>"x"</kbd></dt><dd>{tr.t("queue.key_select")}</dd>
                <dt><kbd>"a"</kbd>" / "<kbd>"r"</kbd>" / "<kbd>"e"</kbd></dt><dd>{tr.t("queue.key_decide")}</dd>
                <dt><kbd>"?"</kbd></dt><dd>{tr.t("queue.key_help")}</dd>
            </dl>
            <button type="button" on:click=move |_| help.set(false)>{tr.t("queue.close")}</button>
        </div>
    }
}

/// The connection's counters (also what the browser tests watch).
#[component]
fn LiveFooter() -> impl IntoView {
    let tr = use_tr();
    let live = use_live();
    let received = move || live.map_or(0, |l| l.received.get());
    let last = move || {
        live.and_then(|l| l.last.get())
            .map(|e| format!("#{} {}", e.seq, e.event.kind()))
            .unwrap_or_else(|| tr.t("queue.none_yet").into())
    };
    view! {
        <footer class="live-footer muted">
            {tr.t("queue.live_before")}<span data-testid="events-received">{received}</span>
            {tr.t("queue.live_middle")}<span data-testid="last-event">{last}</span>
            {tr.t("queue.live_press")}<kbd>"?"</kbd>{tr.t("queue.live_after")}
        </footer>
    }
}

#[cfg(test)]
mod tests {
    use super::waiting_text;
    use crate::api::grouped;
    use crate::i18n::Tr;

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(55_000), "55,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(waiting_text(Tr::default(), 50_000), "50,000 calls are waiting.");
        assert_eq!(waiting_text(Tr::default(), 1), "1 call is waiting.");
    }
}
