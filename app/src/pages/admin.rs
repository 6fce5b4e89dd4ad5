use crate::api::{error_text, list_channels, list_users, ChannelView, Role, UserView, CSRF_FIELD};
use crate::components::clock::utc;
use crate::components::post::PostForm;
use crate::components::shell::{use_session, Guarded};
use leptos::prelude::*;
use leptos_meta::Title;

/// Users: add, change role, disable / enable; notification channels. Server-rendered;
/// every form also works without JS.
#[component]
pub fn Admin() -> impl IntoView {
    view! {
        <Title text="Admin"/>
        <Guarded path="/admin">
            <h1>"Admin"</h1>
            <p class="card"><a href="/admin/policy" data-testid="policy-link">"Policy"</a>
                " — the policy in force, its history, changing it without a restart, and what a change would have done to recorded calls."</p>
            <Users/>
            <Channels/>
        </Guarded>
    }
}

#[component]
fn Users() -> impl IntoView {
    let csrf = use_session().csrf_token;
    let users = Resource::new(|| (), |_| list_users());
    view! {
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || {
                let csrf = csrf.clone();
                Suspend::new(async move {
                let list = users.await;
                view! {
                    <section class="card" aria-labelledby="users-h">
                        <h2 id="users-h">"Users"</h2>
                        {match list {
                            Ok(list) => view! { <UserTable users=list csrf=csrf.clone()/> }.into_any(),
                            Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                        }}
                    </section>
                    <section class="card" aria-labelledby="add-h">
                        <h2 id="add-h">"Add a user"</h2>
                        <PostForm action="/api/users/add".to_string() class="grid-form".to_string() testid="add-user-form".to_string()
                            done="Added {username}.".to_string() notice="admin-notice".to_string() error="admin-error".to_string()>
                            <input type="hidden" name=CSRF_FIELD value=csrf.clone()/>
                            <label for="new-username">"Username"</label>
                            <input id="new-username" name="username" required minlength="2" maxlength="64" autocomplete="off"/>
                            <label for="new-password">"Initial password"</label>
                            <input id="new-password" name="password" type="password" required minlength="12" autocomplete="new-password"/>
                            <label for="new-role">"Role"</label>
                            <RoleSelect id="new-role".to_string() selected=Role::Reviewer/>
                            <button type="submit" class="primary">"Add user"</button>
                        </PostForm>
                    </section>
                }
            })}}
        </Suspense>
    }
}

#[component]
fn RoleSelect(id: String, selected: Role) -> impl IntoView {
    view! {
        <select id=id name="role">
            {Role::ALL
                .into_iter()
                .map(|r| view! { <option value=r.as_str() selected=r == selected>{r.as_str()}</option> })
                .collect_view()}
        </select>
    }
}

#[component]
fn UserTable(users: Vec<UserView>, csrf: String) -> impl IntoView {
    let rows = users
        .into_iter()
        .map(|u| {
            let csrf_a = csrf.clone();
            let csrf_b = csrf.clone();
            let id = u.id.to_string();
            let id_b = id.clone();
            let name = u.username.clone();
            let row_key = u.username.clone();
            let role_label = format!("Role of {}", u.username);
            let select_id = format!("role-{}", u.id);
            let select_id_b = select_id.clone();
            let status = if u.disabled { "disabled" } else { "active" };
            let toggle = if u.disabled { "Enable" } else { "Disable" };
            let next_disabled = (!u.disabled).to_string();
            view! {
                <tr data-user=row_key>
                    <td>{name}</td>
                    <td>
                        <PostForm action="/api/users/role".to_string() class="inline".to_string()
                            done="Role changed.".to_string() notice="admin-notice".to_string() error="admin-error".to_string()>
                            <input type="hidden" name=CSRF_FIELD value=csrf_a/>
                            <input type="hidden" name="user_id" value=id/>
                            <label class="sr-only" for=select_id>{role_label}</label>
                            <RoleSelect id=select_id_b selected=u.role/>
                            <button type="submit">"Change"</button>
                        </PostForm>
                    </td>
                    <td>{status}</td>
                    <td>
                        <PostForm action="/api/users/disabled".to_string() class="inline".to_string()
                            done="Saved.".to_string() notice="admin-notice".to_string() error="admin-error".to_string()>
                            <input type="hidden" name=CSRF_FIELD value=csrf_b/>
                            <input type="hidden" name="user_id" value=id_b/>
                            <input type="hidden" name="disabled" value=next_disabled/>
                            <button type="submit">{toggle}</button>
                        </PostForm>
                    </td>
                    <td class="muted">{u.created_at}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="table">
            <thead>
                <tr><th scope="col">"User"</th><th scope="col">"Role"</th><th scope="col">"Status"</th><th scope="col">"Action"</th><th scope="col">"Created"</th></tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// Notification channels: where held calls, escalations, break-glass and overrides are
/// announced. Those from the configuration file are listed; others are added here.
#[component]
fn Channels() -> impl IntoView {
    let csrf = StoredValue::new(use_session().csrf_token);
    let list = Resource::new(|| (), |_| list_channels());
    view! {
        <section class="card" aria-labelledby="channels-h" data-testid="channels">
            <h2 id="channels-h">"Notification channels"</h2>
            <p class="muted">"Held calls at or above a channel's risk, escalations, break-glass, overrides awaiting review and failed deliveries are sent to these channels. Deliveries are retried, checked against private addresses and recorded in the audit trail."</p>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match list.await {
                        Ok(l) if l.is_empty() => view! { <p class="muted" data-testid="no-channels">"No channel is configured: nobody is told about held calls outside the dashboard."</p> }.into_any(),
                        Ok(l) => view! { <ChannelTable channels=l csrf=csrf.get_value()/> }.into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Suspense>
            <h3>"Add a channel"</h3>
            <PostForm action="/api/channels/add".to_string() class="grid-form".to_string() testid="add-channel-form".to_string()
                done="Channel added.".to_string() notice="channel-notice".to_string()>
                <input type="hidden" name=CSRF_FIELD value=csrf.get_value()/>
                <label for="ch-name">"Channel name"</label>
                <input id="ch-name" name="channel[name]" required maxlength="64" autocomplete="off"/>
                <label for="ch-kind">"Kind"</label>
                <select id="ch-kind" name="channel[kind]">
                    <option value="slack">"Slack-compatible webhook"</option>
                    <option value="webhook">"JSON webhook (signed)"</option>
                    <option value="email">"E-mail"</option>
                </select>
                <label for="ch-url">"Webhook URL"</label>
                <input id="ch-url" name="channel[url]" type="url" autocomplete="off" placeholder="https://…"/>
                <label for="ch-secret">"Signing secret (JSON webhook)"</label>
                <input id="ch-secret" name="channel[secret]" type="password" autocomplete="off" placeholder="whsec_…"/>
                <label for="ch-to">"E-mail recipients"</label>
                <input id="ch-to" name="channel[to]" autocomplete="off" placeholder="oncall@example.com, …"/>
                <label for="ch-risk">"Held calls from risk"</label>
                <select id="ch-risk" name="channel[min_risk]">
                    <option value="low">"low"</option>
                    <option value="medium">"medium"</option>
                    <option value="high" selected>"high"</option>
                    <option value="critical">"critical"</option>
                </select>
                <label for="ch-events">"Events (empty: all)"</label>
                <input id="ch-events" name="channel[events]" autocomplete="off" placeholder="held, escalated, break_glass, override, failure"/>
                <button type="submit" class="primary">"Add channel"</button>
            </PostForm>
        </section>
    }
}

#[component]
fn ChannelTable(channels: Vec<ChannelView>, csrf: String) -> impl IntoView {
    let rows = channels
        .into_iter()
        .map(|c| {
            let (csrf_a, csrf_b) = (csrf.clone(), csrf.clone());
            let (name_a, name_b) = (c.name.clone(), c.name.clone());
            let events = if c.events.is_empty() {
                "all events".to_string()
            } else {
                c.events.join(", ")
            };
            let health = match (&c.last_error, c.last_at_ms) {
                (_, None) => "nothing sent yet".to_string(),
                (Some(e), Some(t)) if c.failed > 0 => {
                    format!("{} sent, {} failed; last at {} — {e}", c.delivered, c.failed, utc(t))
                }
                (_, Some(t)) => format!("{} sent; last at {}", c.delivered, utc(t)),
            };
            view! {
                <tr data-channel=c.name.clone()>
                    <td><strong>{c.name.clone()}</strong><br/><span class="muted">{c.kind.clone()}</span></td>
                    <td>{c.target.clone()}</td>
                    <td>{format!("{events}; held calls from {} risk", c.min_risk)}</td>
                    <td data-testid="channel-health">{health}</td>
                    <td>
                        <PostForm action="/api/channels/test".to_string() class="inline".to_string() notice="channel-notice".to_string()>
                            <input type="hidden" name=CSRF_FIELD value=csrf_a/>
                            <input type="hidden" name="name" value=name_a/>
                            <button type="submit">"Send test"</button>
                        </PostForm>
                        {if c.from_config {
                            view! { <span class="muted">" from the configuration file"</span> }.into_any()
                        } else {
                            view! {
                                <PostForm action="/api/channels/remove".to_string() class="inline".to_string()
                                    done="Channel removed.".to_string() notice="channel-notice".to_string()>
                                    <input type="hidden" name=CSRF_FIELD value=csrf_b/>
                                    <input type="hidden" name="name" value=name_b/>
                                    <button type="submit" class="reject">"Remove"</button>
                                </PostForm>
                            }.into_any()
                        }}
                    </td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="table">
            <thead><tr><th scope="col">"Channel"</th><th scope="col">"Sends to"</th><th scope="col">"What"</th><th scope="col">"Deliveries"</th><th scope="col">"Action"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}
