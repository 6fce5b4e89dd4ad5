//! The live queue: held calls arrive and leave through the event hub without a reload.
//! New calls are appended at the end of their sort order, so what a reviewer is reading
//! does not move; calls decided elsewhere stay in place, marked with who decided.

use crate::api::{
    decide_batch, error_text, get_queue, DecisionOutcome, QueueItem, QueueSnapshot, SessionInfo, Verdict,
};
use crate::components::clock::{countdown, span, start_clock, Clock};
use crate::components::live::{on_live_event, use_live};
use crate::components::shell::{use_session, Guarded};
use leptos::prelude::*;
use leptos_meta::Title;
use serde::Deserialize;
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
    let SessionInfo { user, csrf_token: csrf } = use_session();
    let can_decide = user.is_some_and(|u| u.role.can_decide());
    let snapshot = Resource::new(|| (), |_| get_queue());
    view! {
        <Suspense fallback=|| view! { <p class="muted">"Loading the queue…"</p> }>
            {move || {
                let csrf = csrf.clone();
                Suspend::new(async move {
                match snapshot.await {
                    Ok(s) => view! { <QueueView snapshot=s csrf can_decide/> }.into_any(),
                    Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                }
            })}}
        </Suspense>
    }
}

/// A queue entry and, once known, how it ended.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    item: QueueItem,
    /// (status, decided by) once decided by anyone.
    decided: Option<(String, String)>,
}

#[derive(Deserialize)]
struct Decided {
    id: String,
    status: String,
    decided_by: Option<String>,
}

#[derive(Deserialize)]
struct Updated {
    id: String,
    approvals: Vec<String>,
}

fn risk_rank(r: &str) -> u8 {
    match r {
        "critical" => 0,
        "high" => 1,
        "medium" => 2,
        _ => 3,
    }
}

/// `user:alice` → `alice` (lists joined with "and").
pub fn who(by: &str) -> String {
    by.split(", ")
        .map(|p| p.strip_prefix("user:").unwrap_or(p))
        .collect::<Vec<_>>()
        .join(" and ")
}

#[component]
fn QueueView(snapshot: QueueSnapshot, csrf: String, can_decide: bool) -> impl IntoView {
    let clock: Clock = start_clock(snapshot.now_ms);
    let rows = RwSignal::new(
        snapshot
            .items
            .into_iter()
            .map(|item| Row { item, decided: None })
            .collect::<Vec<_>>(),
    );
    let (f_tool, f_agent, f_risk, f_session) = (
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
    );
    let sort = RwSignal::new("oldest".to_string());
    let selected = RwSignal::new(BTreeSet::<String>::new());
    let cursor = RwSignal::new(0usize);
    let help = RwSignal::new(false);

    // Reload the whole queue (on connect and when the hub says events were missed),
    // keeping rows already marked as decided.
    let reload = move || {
        leptos::task::spawn_local(async move {
            if let Ok(s) = get_queue().await {
                rows.update(|rs| {
                    let fresh: Vec<Row> = s.items.into_iter().map(|item| Row { item, decided: None }).collect();
                    rs.retain(|r| r.decided.is_some() && !fresh.iter().any(|f| f.item.id == r.item.id));
                    let mut merged = fresh;
                    merged.append(rs);
                    *rs = merged;
                });
            }
        });
    };
    on_live_event(move |e| match e.kind.as_str() {
        "hello" | "resync" => reload(),
        "call_pending" => {
            if let Ok(item) = serde_json::from_str::<QueueItem>(&e.data) {
                rows.update(|rs| {
                    if !rs.iter().any(|r| r.item.id == item.id) {
                        rs.push(Row { item, decided: None });
                    }
                });
            }
        }
        "call_decided" => {
            if let Ok(d) = serde_json::from_str::<Decided>(&e.data) {
                rows.update(|rs| {
                    if let Some(r) = rs.iter_mut().find(|r| r.item.id == d.id) {
                        r.decided = Some((d.status, d.decided_by.unwrap_or_else(|| "system".into())));
                    }
                });
                selected.update(|s| {
                    s.remove(&d.id);
                });
            }
        }
        "call_updated" => {
            if let Ok(u) = serde_json::from_str::<Updated>(&e.data) {
                rows.update(|rs| {
                    if let Some(r) = rs.iter_mut().find(|r| r.item.id == u.id) {
                        r.item.approvals = u.approvals;
                    }
                });
            }
        }
        _ => {}
    });

    let visible = Memo::new(move |_| {
        let (t, a, k, s) = (f_tool.get(), f_agent.get(), f_risk.get(), f_session.get());
        let mut v: Vec<Row> = rows
            .get()
            .into_iter()
            .filter(|r| {
                (t.is_empty() || r.item.tool == t)
                    && (a.is_empty() || r.item.agent == a)
                    && (k.is_empty() || r.item.risk == k)
                    && (s.is_empty() || r.item.session_id == s)
            })
            .collect();
        match sort.get().as_str() {
            "expiry" => v.sort_by_key(|r| (r.item.expires_at_ms.unwrap_or(i64::MAX), r.item.created_at_ms)),
            "risk" => v.sort_by_key(|r| (risk_rank(&r.item.risk), r.item.created_at_ms)),
            _ => v.sort_by_key(|r| r.item.created_at_ms),
        }
        v
    });
    let waiting = Memo::new(move |_| rows.with(|rs| rs.iter().filter(|r| r.decided.is_none()).count()));
    let options =
        move |f: fn(&QueueItem) -> String| rows.with(|rs| rs.iter().map(|r| f(&r.item)).collect::<BTreeSet<_>>());

    // Keyboard: j/k move, Enter opens, x selects, ? shows the keys.
    #[cfg(feature = "hydrate")]
    {
        use leptos::ev;
        use wasm_bindgen::JsCast;
        let navigate = leptos_router::hooks::use_navigate();
        let handle = window_event_listener(ev::keydown, move |e: web_sys::KeyboardEvent| {
            let typing = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
                .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
            if typing || e.ctrl_key() || e.meta_key() || e.alt_key() {
                return;
            }
            let n = visible.with_untracked(Vec::len);
            match e.key().as_str() {
                "j" if n > 0 => cursor.update(|c| *c = (*c + 1).min(n - 1)),
                "k" => cursor.update(|c| *c = c.saturating_sub(1)),
                "Enter" => {
                    if let Some(r) = visible.with_untracked(|v| v.get(cursor.get_untracked()).cloned()) {
                        navigate(&format!("/calls/{}", r.item.id), Default::default());
                    }
                }
                "x" if can_decide => {
                    if let Some(r) = visible.with_untracked(|v| v.get(cursor.get_untracked()).cloned()) {
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

    let filter = move |label: &'static str, id: &'static str, sig: RwSignal<String>, f: fn(&QueueItem) -> String| {
        view! {
            <label for=id>{label}</label>
            <select id=id on:change=move |e| sig.set(event_target_value(&e)) prop:value=move || sig.get()>
                <option value="">"All"</option>
                {move || options(f).into_iter().map(|v| {
                    let selected = sig.get_untracked() == v;
                    view! { <option value=v.clone() selected=selected>{v.clone()}</option> }
                }).collect_view()}
            </select>
        }
    };

    view! {
        <Title text=move || match waiting.get() { 0 => "Queue".to_string(), n => format!("({n}) Queue") }/>
        <div class="page-head">
            <h1>"Queue"</h1>
            <p class="muted" data-testid="queue-count" aria-live="polite">
                {move || match waiting.get() { 0 => "Nothing is waiting.".to_string(), 1 => "1 call is waiting.".to_string(), n => format!("{n} calls are waiting.") }}
            </p>
            <NotifyToggle rows/>
        </div>
        <section class="card filters" aria-label="Filter and sort">
            {filter("Tool", "f-tool", f_tool, |i| i.tool.clone())}
            {filter("Agent", "f-agent", f_agent, |i| i.agent.clone())}
            {filter("Risk", "f-risk", f_risk, |i| i.risk.clone())}
            {filter("Session", "f-session", f_session, |i| i.session_id.clone())}
            <label for="f-sort">"Sort"</label>
            <select id="f-sort" on:change=move |e| sort.set(event_target_value(&e))>
                <option value="oldest">"Oldest first"</option>
                <option value="expiry">"Expiring soonest"</option>
                <option value="risk">"Highest risk"</option>
            </select>
        </section>
        {can_decide.then(|| view! { <BatchBar selected csrf=csrf.clone()/> })}
        <section aria-labelledby="pending-h">
            <h2 id="pending-h" class="sr-only">"Waiting for a decision"</h2>
            <Show when=move || visible.with(|v| v.is_empty())>
                <p class="card muted" data-testid="queue-empty">"No calls are waiting."</p>
            </Show>
            <ol class="queue" data-testid="queue">
                <For
                    each=move || visible.get().into_iter().enumerate()
                    key=|(i, r)| (*i, r.item.id.clone(), r.decided.clone(), r.item.approvals.len())
                    children=move |(i, r)| view! { <QueueRow row=r index=i cursor selected clock can_decide/> }
                />
            </ol>
        </section>
        <Show when=move || help.get()>
            <KeyHelp help/>
        </Show>
        <LiveFooter/>
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
    let quorum = (item.approvers_required > 1)
        .then(|| format!("{} of {} approvals", item.approvals.len(), item.approvers_required));
    let decided = row.decided.clone();
    let is_decided = decided.is_some();
    let label = format!("Select {} call {}", item.tool, id);
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
                <span class=format!("risk risk-{}", item.risk)>{item.risk.clone()}</span>
                {item.destructive.then(|| view! { <span class="tag warn">"destructive"</span> })}
                {item.server.clone().map(|s| view! { <span class="tag">{format!("MCP {s}")}</span> })}
                <p class="why">
                    {item.rule.clone().map(|r| view! { <code>{r}</code>" · " })}
                    {item.reason.clone()}
                </p>
                <p class="meta muted">
                    {format!("agent {} · session {}", item.agent, item.session_id)}
                    {quorum.map(|q| view! { " · " <strong>{q}</strong> })}
                </p>
            </div>
            <div class="qtime">
                {match decided {
                    Some((status, by)) => view! {
                        <span class="decided-by" data-testid="decided-by">{format!("{status} by {}", who(&by))}</span>
                    }.into_any(),
                    None => view! {
                        <span class="age">{move || format!("{} ago", span(clock.now_ms.get() - created))}</span>
                        <span class="countdown">{move || countdown(expires, clock.now_ms.get())}</span>
                    }.into_any(),
                }}
            </div>
        </li>
    }
}

#[component]
fn BatchBar(selected: RwSignal<BTreeSet<String>>, csrf: String) -> impl IntoView {
    let reason = RwSignal::new(String::new());
    let csrf = StoredValue::new(csrf);
    let run = Action::new(move |(verdict, why): &(Verdict, String)| {
        let ids: Vec<String> = selected.get_untracked().into_iter().collect();
        let (verdict, why) = (*verdict, why.clone());
        let token = csrf.get_value();
        async move { decide_batch(token, ids, verdict, why).await }
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
        <section class="card batch" aria-label="Batch decision" data-testid="batch-bar">
            <span>{move || format!("{} selected", count())}</span>
            <button
                type="button"
                class="approve"
                disabled=move || count() == 0 || run.pending().get()
                on:click=move |_| { run.dispatch((Verdict::Approve, String::new())); }
            >"Approve selected"</button>
            <label for="batch-reason" class="sr-only">"Reason for rejecting the selected calls"</label>
            <input
                id="batch-reason"
                placeholder="Reason (required to reject)"
                prop:value=move || reason.get()
                on:input=move |e| reason.set(event_target_value(&e))
            />
            <button
                type="button"
                class="reject"
                disabled=move || count() == 0 || reason.with(|r| r.trim().is_empty()) || run.pending().get()
                on:click=move |_| { run.dispatch((Verdict::Reject, reason.get_untracked())); }
            >"Reject selected"</button>
            {move || results().map(|r| match r {
                Ok(outs) => view! { <BatchResults outs/> }.into_any(),
                Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
            })}
        </section>
    }
}

#[component]
fn BatchResults(outs: Vec<DecisionOutcome>) -> impl IntoView {
    let ok = outs.iter().filter(|o| o.ok).count();
    let failed = outs.len() - ok;
    view! {
        <div class="batch-results" role="status" data-testid="batch-results">
            <p><strong>{format!("{ok} decided")}</strong>{(failed > 0).then(|| format!(", {failed} failed"))}</p>
            <ul>
                {outs.into_iter().map(|o| view! {
                    <li class:error=!o.ok data-call=o.id.clone()>{format!("{}: {}", o.id, o.message)}</li>
                }).collect_view()}
            </ul>
        </div>
    }
}

/// Optional desktop notifications for new held calls while the tab is in the background.
#[component]
fn NotifyToggle(rows: RwSignal<Vec<Row>>) -> impl IntoView {
    let enabled = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    {
        enabled.set(web_sys::Notification::permission() == web_sys::NotificationPermission::Granted);
        let known = StoredValue::new(rows.with_untracked(|r| r.len()));
        Effect::new(move |_| {
            let n = rows.with(|r| r.len());
            let before = known.get_value();
            known.set_value(n);
            let hidden = document().hidden();
            if n > before && enabled.get_untracked() && hidden {
                if let Some(r) = rows.with_untracked(|r| r.last().cloned()) {
                    let opts = web_sys::NotificationOptions::new();
                    opts.set_body(&r.item.reason);
                    let _ = web_sys::Notification::new_with_options(&format!("Held: {}", r.item.tool), &opts);
                }
            }
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = rows;
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
            {move || if enabled.get() { "Notifications on" } else { "Notify me of new calls" }}
        </button>
    }
}

#[component]
fn KeyHelp(help: RwSignal<bool>) -> impl IntoView {
    view! {
        <div class="card keyhelp" role="dialog" aria-label="Keyboard shortcuts" data-testid="key-help">
            <h2>"Keyboard"</h2>
            <dl class="facts">
                <dt><kbd>"j"</kbd>" / "<kbd>"k"</kbd></dt><dd>"next / previous call"</dd>
                <dt><kbd>"Enter"</kbd></dt><dd>"open the call"</dd>
                <dt><kbd>"x"</kbd></dt><dd>"select for a batch decision"</dd>
                <dt><kbd>"a"</kbd>" / "<kbd>"r"</kbd>" / "<kbd>"e"</kbd></dt><dd>"on a call: approve / reject / edit"</dd>
                <dt><kbd>"?"</kbd></dt><dd>"show or hide these keys"</dd>
            </dl>
            <button type="button" on:click=move |_| help.set(false)>"Close"</button>
        </div>
    }
}

/// The connection's counters (also what the browser tests watch).
#[component]
fn LiveFooter() -> impl IntoView {
    let live = use_live();
    let received = move || live.map_or(0, |l| l.received.get());
    let last = move || {
        live.and_then(|l| l.last.get())
            .map(|e| format!("#{} {}", e.seq, e.kind))
            .unwrap_or_else(|| "none yet".into())
    };
    view! {
        <footer class="live-footer muted">
            "Live updates: "<span data-testid="events-received">{received}</span>
            " events · latest "<span data-testid="last-event">{last}</span>
            " · press "<kbd>"?"</kbd>" for keys"
        </footer>
    }
}
