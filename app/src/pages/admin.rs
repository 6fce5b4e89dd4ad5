use crate::api::{
    error_text_in, list_agents, list_channels, list_users, AgentView, ChannelView, Role, UserView, CSRF_FIELD,
};
use crate::components::post::PostForm;
use crate::components::secret::SecretForm;
use crate::components::shell::{role_key, use_session, Guarded};
use crate::i18n::{tr_key, use_tr, Tr};
use leptos::prelude::*;
use leptos_meta::Title;

/// Users: add, change role, disable / enable; agents: add, rotate, disable / enable;
/// notification channels. Server-rendered;
/// every form also works without JS.
#[component]
pub fn Admin() -> impl IntoView {
    let tr = use_tr();
    view! {
        <Title text=tr.t("admin.title")/>
        <Guarded path="/admin">
            <h1>{tr.t("admin.title")}</h1>
            <p class="card"><a href="/admin/policy" data-testid="policy-link">{tr.t("admin.policy_link")}</a>
                {tr.t("admin.policy_after")}</p>
            <Users/>
            <Agents/>
            <Channels/>
        </Guarded>
    }
}

#[component]
fn Users() -> impl IntoView {
    let tr = use_tr();
    let csrf = use_session().csrf_token;
    let users = Resource::new(|| (), |_| list_users());
    view! {
        <Suspense fallback=move || view! { <p class="muted">{tr.t("admin.loading")}</p> }>
            {move || {
                let csrf = csrf.clone();
                Suspend::new(async move {
                let list = users.await;
                view! {
                    <section class="card" aria-labelledby="users-h">
                        <h2 id="users-h">{tr.t("admin.users")}</h2>
                        {match list {
                            Ok(list) => view! { <UserTable users=list csrf=csrf.clone() tr/> }.into_any(),
                            Err(e) => view! { <p class="error" role="alert">{error_text_in(tr, &e)}</p> }.into_any(),
                        }}
                    </section>
                    <section class="card" aria-labelledby="add-h">
                        <h2 id="add-h">{tr.t("admin.add_user_heading")}</h2>
                        <PostForm action="/api/users/add".to_string() class="grid-form".to_string() testid="add-user-form".to_string()
                            done=tr.t("admin.user_added").to_string() notice="admin-notice".to_string() error="admin-error".to_string()>
                            <input type="hidden" name=CSRF_FIELD value=csrf.clone()/>
                            <label for="new-username">{tr.t("admin.username")}</label>
                            <input id="new-username" name="username" required minlength="2" maxlength="64" autocomplete="off"/>
                            <label for="new-password">{tr.t("admin.initial_password")}</label>
                            <input id="new-password" name="password" type="password" required minlength="12" autocomplete="new-password"/>
                            <label for="new-role">{tr.t("admin.role")}</label>
                            <RoleSelect id="new-role".to_string() selected=Role::Reviewer tr/>
                            <button type="submit" class="primary">{tr.t("admin.add_user")}</button>
                        </PostForm>
                    </section>
                }
            })}}
        </Suspense>
    }
}

#[component]
fn RoleSelect(id: String, selected: Role, tr: Tr) -> impl IntoView {
    view! {
        <select id=id name="role">
            {Role::ALL
                .into_iter()
                .map(|r| view! { <option value=r.as_str() selected=r == selected>{tr.t(role_key(r))}</option> })
                .collect_view()}
        </select>
    }
}

#[component]
fn UserTable(users: Vec<UserView>, csrf: String, tr: Tr) -> impl IntoView {
    let rows = users
        .into_iter()
        .map(|u| {
            let csrf_a = csrf.clone();
            let csrf_b = csrf.clone();
            let id = u.id.to_string();
            let id_b = id.clone();
            let name = u.username.clone();
            let row_key = u.username.clone();
            let role_label = tr.f("admin.role_of", &[("user", &u.username)]);
            let select_id = format!("role-{}", u.id);
            let select_id_b = select_id.clone();
            let status = if u.disabled { tr.t("admin.status_disabled") } else { tr.t("admin.status_active") };
            let toggle = if u.disabled { tr.t("admin.enable") } else { tr.t("admin.disable") };
            let next_disabled = (!u.disabled).to_string();
            view! {
                <tr data-user=row_key>
                    <td>{name}</td>
                    <td>
                        <PostForm action="/api/users/role".to_string() class="inline".to_string()
                            done=tr.t("admin.role_changed").to_string() notice="admin-notice".to_string() error="admin-error".to_string()>
                            <input type="hidden" name=CSRF_FIELD value=csrf_a/>
                            <input type="hidden" name="user_id" value=id/>
                            <label class="sr-only" for=select_id>{role_label}</label>
                            <RoleSelect id=select_id_b selected=u.role tr/>
                            <button type="submit">{tr.t("admin.change")}</button>
                        </PostForm>
                    </td>
                    <td>{status}</td>
                    <td>
                        <PostForm action="/api/users/disabled".to_string() class="inline".to_string()
                            done=tr.t("admin.saved").to_string() notice="admin-notice".to_string() error="admin-error".to_string()>
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
                <tr>
                    <th scope="col">{tr.t("admin.col_user")}</th>
                    <th scope="col">{tr.t("admin.role")}</th>
                    <th scope="col">{tr.t("admin.col_status")}</th>
                    <th scope="col">{tr.t("admin.col_action")}</th>
                    <th scope="col">{tr.t("admin.col_created")}</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// Notification channels: where held calls, escalations, break-glass and overrides are
/// announced. Those from the configuration file are listed; others are added here.
#[component]
fn Channels() -> impl IntoView {
    let tr = use_tr();
    let csrf = StoredValue::new(use_session().csrf_token);
    let list = Resource::new(|| (), |_| list_channels());
    view! {
        <section class="card" aria-labelledby="channels-h" data-testid="channels">
            <h2 id="channels-h">{tr.t("admin.channels")}</h2>
            <p class="muted">{tr.t("admin.channels_intro")}</p>
            <Suspense fallback=move || view! { <p class="muted">{tr.t("admin.loading")}</p> }>
                {move || Suspend::new(async move {
                    match list.await {
                        Ok(l) if l.is_empty() => view! { <p class="muted" data-testid="no-channels">{tr.t("admin.no_channels")}</p> }.into_any(),
                        Ok(l) => view! { <ChannelTable channels=l csrf=csrf.get_value() tr/> }.into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text_in(tr, &e)}</p> }.into_any(),
                    }
                })}
            </Suspense>
            <h3>{tr.t("admin.add_channel_heading")}</h3>
            <PostForm action="/api/channels/add".to_string() class="grid-form".to_string() testid="add-channel-form".to_string()
                done=tr.t("admin.channel_added").to_string() notice="channel-notice".to_string()>
                <input type="hidden" name=CSRF_FIELD value=csrf.get_value()/>
                <label for="ch-name">{tr.t("admin.channel_name")}</label>
                <input id="ch-name" name="channel[name]" required maxlength="64" autocomplete="off"/>
                <label for="ch-kind">{tr.t("admin.kind")}</label>
                <select id="ch-kind" name="channel[kind]">
                    <option value="slack">{tr.t("admin.kind_slack")}</option>
                    <option value="webhook">{tr.t("admin.kind_webhook")}</option>
                    <option value="email">{tr.t("admin.kind_email")}</option>
                </select>
                <label for="ch-url">{tr.t("admin.webhook_url")}</label>
                <input id="ch-url" name="channel[url]" type="url" autocomplete="off" placeholder="https://…"/>
                <label for="ch-secret">{tr.t("admin.signing_secret")}</label>
                <input id="ch-secret" name="channel[secret]" type="password" autocomplete="off" placeholder="whsec_…"/>
                <label for="ch-to">{tr.t("admin.email_recipients")}</label>
                <input id="ch-to" name="channel[to]" autocomplete="off" placeholder="oncall@example.com, …"/>
                <label for="ch-risk">{tr.t("admin.min_risk")}</label>
                <select id="ch-risk" name="channel[min_risk]">
                    <option value="low">{tr.t("risk.low")}</option>
                    <option value="medium">{tr.t("risk.medium")}</option>
                    <option value="high" selected>{tr.t("risk.high")}</option>
                    <option value="critical">{tr.t("risk.critical")}</option>
                </select>
                <label for="ch-events">{tr.t("admin.events")}</label>
                <input id="ch-events" name="channel[events]" autocomplete="off" placeholder="held, escalated, break_glass, override, failure"/>
                <button type="submit" class="primary">{tr.t("admin.add_channel")}</button>
            </PostForm>
        </section>
    }
}

#[component]
fn ChannelTable(channels: Vec<ChannelView>, csrf: String, tr: Tr) -> impl IntoView {
    let rows = channels
        .into_iter()
        .map(|c| {
            let (csrf_a, csrf_b) = (csrf.clone(), csrf.clone());
            let (name_a, name_b) = (c.name.clone(), c.name.clone());
            let events = if c.events.is_empty() {
                tr.t("admin.all_events").to_string()
            } else {
                c.events.join(", ")
            };
            let health = match (&c.last_error, c.last_at_ms) {
                (_, None) => tr.t("admin.nothing_sent").to_string(),
                (Some(e), Some(t)) if c.failed > 0 => tr.f("admin.sent_failed", &[
                    ("sent", &c.delivered.to_string()),
                    ("failed", &c.failed.to_string()),
                    ("at", &tr.time(t)),
                    ("error", e),
                ]),
                (_, Some(t)) => tr.f("admin.sent", &[("sent", &c.delivered.to_string()), ("at", &tr.time(t))]),
            };
            view! {
                <tr data-channel=c.name.clone()>
                    <td><strong>{c.name.clone()}</strong><br/><span class="muted">{c.kind.clone()}</span></td>
                    <td>{c.target.clone()}</td>
                    <td>{tr.f("admin.what", &[("events", &events), ("risk", tr.word("risk", &c.min_risk))])}</td>
                    <td data-testid="channel-health">{health}</td>
                    <td>
                        <PostForm action="/api/channels/test".to_string() class="inline".to_string() notice="channel-notice".to_string()>
                            <input type="hidden" name=CSRF_FIELD value=csrf_a/>
                            <input type="hidden" name="name" value=name_a/>
                            <button type="submit">{tr.t("admin.send_test")}</button>
                        </PostForm>
                        {if c.from_config {
                            view! { <span class="muted">{tr.t("admin.from_config")}</span> }.into_any()
                        } else {
                            view! {
                                <PostForm action="/api/channels/remove".to_string() class="inline".to_string()
                                    done=tr.t("admin.channel_removed").to_string() notice="channel-notice".to_string()>
                                    <input type="hidden" name=CSRF_FIELD value=csrf_b/>
                                    <input type="hidden" name="name" value=name_b/>
                                    <button type="submit" class="reject">{tr.t("admin.remove")}</button>
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
            <thead><tr>
                <th scope="col">{tr.t("admin.col_channel")}</th>
                <th scope="col">{tr.t("admin.col_sends_to")}</th>
                <th scope="col">{tr.t("admin.col_what")}</th>
                <th scope="col">{tr.t("admin.col_deliveries")}</th>
                <th scope="col">{tr.t("admin.col_action")}</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// Grace periods offered for the earlier secret after a rotation (seconds, label).
/// The labels are catalogue keys.
const GRACE: [(i64, &str); 5] = [
    (0, tr_key("admin.grace_none")),
    (3600, tr_key("admin.grace_1h")),
    (86_400, tr_key("admin.grace_24h")),
    (7 * 86_400, tr_key("admin.grace_7d")),
    (30 * 86_400, tr_key("admin.grace_30d")),
];

/// Agents: the programs that propose tool calls, each with a signing secret shown once.
#[component]
fn Agents() -> impl IntoView {
    let tr = use_tr();
    let csrf = StoredValue::new(use_session().csrf_token);
    let list = Resource::new(|| (), |_| list_agents());
    view! {
        <section class="card" aria-labelledby="agents-h" data-testid="agents">
            <h2 id="agents-h">{tr.t("admin.agents")}</h2>
            <p class="muted">{tr.t("admin.agents_intro")}</p>
            <Suspense fallback=move || view! { <p class="muted">{tr.t("admin.loading")}</p> }>
                {move || Suspend::new(async move {
                    match list.await {
                        Ok(l) if l.is_empty() => view! { <p class="muted" data-testid="no-agents">{tr.t("admin.no_agents")}</p> }.into_any(),
                        Ok(l) => view! { <AgentTable agents=l csrf=csrf.get_value() tr/> }.into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text_in(tr, &e)}</p> }.into_any(),
                    }
                })}
            </Suspense>
            <h3>{tr.t("admin.add_agent_heading")}</h3>
            <SecretForm action="/api/agents/add".to_string() class="grid-form".to_string() testid="add-agent-form".to_string()
                label=tr.t("admin.add_agent").to_string() button_class="primary".to_string()>
                <input type="hidden" name=CSRF_FIELD value=csrf.get_value()/>
                <label for="agent-id">{tr.t("admin.agent_id")}</label>
                <input id="agent-id" name="id" required maxlength="64" autocomplete="off"
                    aria-describedby="agent-id-help" placeholder="build-bot"/>
                <span id="agent-id-help" class="muted hint">{tr.t("admin.agent_id_help")}</span>
                <label for="agent-description">{tr.t("admin.description")}</label>
                <input id="agent-description" name="description" maxlength="200" autocomplete="off"/>
            </SecretForm>
        </section>
    }
}

#[component]
fn AgentTable(agents: Vec<AgentView>, csrf: String, tr: Tr) -> impl IntoView {
    let rows = agents
        .into_iter()
        .map(|a| {
            let (csrf_a, csrf_b) = (csrf.clone(), csrf.clone());
            let (id_a, id_b) = (a.id.clone(), a.id.clone());
            let grace_id = format!("grace-{}", a.id);
            let grace_label = tr.f("admin.grace_label", &[("agent", &a.id)]);
            let secrets = a
                .secrets
                .iter()
                .map(|s| match s.retires_at_ms {
                    None => tr.f("admin.secret_current", &[("at", &tr.time(s.created_at_ms))]),
                    Some(t) => tr.f("admin.secret_earlier", &[("at", &tr.time(t))]),
                })
                .collect::<Vec<_>>()
                .join(tr.t("admin.secrets_separator"));
            let status = if a.disabled { tr.t("admin.status_disabled") } else { tr.t("admin.status_active") };
            let toggle = if a.disabled { tr.t("admin.enable") } else { tr.t("admin.disable") };
            let toggle_label = if a.disabled {
                tr.f("admin.enable_agent", &[("agent", &a.id)])
            } else {
                tr.f("admin.disable_agent", &[("agent", &a.id)])
            };
            let next_disabled = (!a.disabled).to_string();
            let done = if a.disabled {
                tr.f("admin.agent_enabled", &[("agent", &a.id)])
            } else {
                tr.f("admin.agent_disabled", &[("agent", &a.id)])
            };
            view! {
                <tr data-agent=a.id.clone()>
                    <td><strong>{a.id.clone()}</strong><br/><span class="muted">{a.description.clone()}</span></td>
                    <td data-testid="agent-status">{status}</td>
                    <td data-testid="agent-secrets">{secrets}</td>
                    <td class="muted">{tr.time(a.created_at_ms)}</td>
                    <td>
                        <SecretForm action="/api/agents/rotate".to_string() class="inline".to_string()
                            label=tr.t("admin.rotate").to_string() testid=format!("rotate-{}", a.id)>
                            <input type="hidden" name=CSRF_FIELD value=csrf_a/>
                            <input type="hidden" name="id" value=id_a/>
                            <label class="sr-only" for=grace_id.clone()>{grace_label}</label>
                            <select id=grace_id name="grace_seconds">
                                {GRACE
                                    .into_iter()
                                    .map(|(s, l)| view! { <option value=s.to_string() selected=s == 86_400>{tr.t(l)}</option> })
                                    .collect_view()}
                            </select>
                        </SecretForm>
                        <PostForm action="/api/agents/disabled".to_string() class="inline".to_string()
                            done=done notice="agent-notice".to_string()>
                            <input type="hidden" name=CSRF_FIELD value=csrf_b/>
                            <input type="hidden" name="id" value=id_b/>
                            <input type="hidden" name="disabled" value=next_disabled/>
                            <button type="submit" aria-label=toggle_label class=if a.disabled { "" } else { "reject" }>{toggle}</button>
                        </PostForm>
                    </td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="table">
            <thead><tr>
                <th scope="col">{tr.t("admin.col_agent")}</th>
                <th scope="col">{tr.t("admin.col_status")}</th>
                <th scope="col">{tr.t("admin.col_secrets")}</th>
                <th scope="col">{tr.t("admin.col_added")}</th>
                <th scope="col">{tr.t("admin.col_action")}</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}
