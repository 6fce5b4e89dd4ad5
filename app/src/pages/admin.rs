use crate::api::{error_text, list_users, AddUser, Role, SetDisabled, SetRole, UserView, CSRF_FIELD};
use crate::components::shell::{use_session, Guarded};
use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;

/// Users: add, change role, disable / enable. Every form also works without JS.
#[component]
pub fn Admin() -> impl IntoView {
    view! {
        <Title text="Admin"/>
        <Guarded path="/admin">
            <h1>"Admin"</h1>
            <Users/>
        </Guarded>
    }
}

#[component]
fn Users() -> impl IntoView {
    let csrf = use_session().csrf_token;
    let add = ServerAction::<AddUser>::new();
    let set_role = ServerAction::<SetRole>::new();
    let set_disabled = ServerAction::<SetDisabled>::new();
    let users = Resource::new(
        move || {
            (
                add.version().get(),
                set_role.version().get(),
                set_disabled.version().get(),
            )
        },
        |_| list_users(),
    );
    let outcome = move || {
        let results = [
            add.value().get().map(|r| r.map(|u| format!("Added {}.", u.username))),
            set_role.value().get().map(|r| r.map(|_| "Role changed.".to_string())),
            set_disabled.value().get().map(|r| r.map(|_| "Saved.".to_string())),
        ];
        results.into_iter().flatten().last()
    };
    view! {
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || {
                let csrf = csrf.clone();
                Suspend::new(async move {
                let list = users.await;
                view! {
                    {move || outcome().map(|r| match r {
                        Ok(m) => view! { <p class="notice" role="status" data-testid="admin-notice">{m}</p> }.into_any(),
                        Err(e) => view! { <p class="error" role="alert" data-testid="admin-error">{error_text(&e)}</p> }.into_any(),
                    })}
                    <section class="card" aria-labelledby="users-h">
                        <h2 id="users-h">"Users"</h2>
                        {match list {
                            Ok(list) => view! { <UserTable users=list csrf=csrf.clone() set_role set_disabled/> }.into_any(),
                            Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                        }}
                    </section>
                    <section class="card" aria-labelledby="add-h">
                        <h2 id="add-h">"Add a user"</h2>
                        <ActionForm action=add attr:class="grid-form" attr:data-testid="add-user-form">
                            <input type="hidden" name=CSRF_FIELD value=csrf.clone()/>
                            <label for="new-username">"Username"</label>
                            <input id="new-username" name="username" required minlength="2" maxlength="64" autocomplete="off"/>
                            <label for="new-password">"Initial password"</label>
                            <input id="new-password" name="password" type="password" required minlength="12" autocomplete="new-password"/>
                            <label for="new-role">"Role"</label>
                            <RoleSelect id="new-role".to_string() selected=Role::Reviewer/>
                            <button type="submit" class="primary">"Add user"</button>
                        </ActionForm>
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
fn UserTable(
    users: Vec<UserView>,
    csrf: String,
    set_role: ServerAction<SetRole>,
    set_disabled: ServerAction<SetDisabled>,
) -> impl IntoView {
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
                        <ActionForm action=set_role attr:class="inline">
                            <input type="hidden" name=CSRF_FIELD value=csrf_a/>
                            <input type="hidden" name="user_id" value=id/>
                            <label class="sr-only" for=select_id>{role_label}</label>
                            <RoleSelect id=select_id_b selected=u.role/>
                            <button type="submit">"Change"</button>
                        </ActionForm>
                    </td>
                    <td>{status}</td>
                    <td>
                        <ActionForm action=set_disabled attr:class="inline">
                            <input type="hidden" name=CSRF_FIELD value=csrf_b/>
                            <input type="hidden" name="user_id" value=id_b/>
                            <input type="hidden" name="disabled" value=next_disabled/>
                            <button type="submit">{toggle}</button>
                        </ActionForm>
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
