//! The confirm page a decision link from a notification opens. Opening it decides
//! nothing: the signed-in reviewer reads what the link proposes and confirms (or opens
//! the call instead). Each link confirms once.

use crate::api::{error_text_in, open_link, Permission, CSRF_FIELD};
use crate::components::post::PostForm;
use crate::components::shell::{use_session, Guarded};
use crate::i18n::use_tr;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

#[component]
pub fn Confirm() -> impl IntoView {
    let tr = use_tr();
    view! {
        <Title text=tr.t("confirm.title")/>
        <Guarded path="/confirm">
            <ConfirmBody/>
        </Guarded>
    }
}

#[component]
fn ConfirmBody() -> impl IntoView {
    let tr = use_tr();
    let query = use_query_map();
    let token = move || query.with(|q| q.get("t").unwrap_or_default());
    let session = use_session();
    let can_decide = session.user.as_ref().is_some_and(|u| u.role.may(Permission::Decide));
    let csrf = StoredValue::new(session.csrf_token);
    let link = Resource::new(token, open_link);
    view! {
        <h1>{tr.t("confirm.heading")}</h1>
        <Suspense fallback=move || view! { <p class="muted">{tr.t("confirm.loading")}</p> }>
            {move || Suspend::new(async move {
                match link.await {
                    Ok(l) => {
                        let approve = l.verdict == "approve";
                        let pending = l.status == "pending";
                        view! {
                            <section class="card narrow" data-testid="confirm">
                                <p>
                                    {if approve { tr.t("confirm.approve_before") } else { tr.t("confirm.reject_before") }}
                                    <strong>{l.tool.clone()}</strong>
                                    {tr.f("confirm.question_after", &[("risk", tr.word("risk", &l.risk)), ("agent", &l.agent)])}
                                </p>
                                <p class="muted">{l.reason.clone()}</p>
                                <p><a href=format!("/calls/{}", l.call_id)>{tr.t("confirm.open_call")}</a></p>
                                {(!pending).then(|| view! { <p class="muted" data-testid="confirm-decided">{tr.f("confirm.already", &[("status", tr.word("status", &l.status))])}</p> })}
                                {(pending && can_decide).then(|| view! {
                                    <PostForm action="/api/links/confirm".to_string() notice="confirm-message".to_string()>
                                        <input type="hidden" name=CSRF_FIELD value=csrf.get_value()/>
                                        <input type="hidden" name="token" value=token()/>
                                        {(!approve).then(|| view! {
                                            <label for="confirm-reason">{tr.t("confirm.reason")}</label>
                                            <textarea id="confirm-reason" name="reason" rows="2" required></textarea>
                                        })}
                                        <button type="submit" class=if approve { "approve" } else { "reject" } data-testid="confirm-button">
                                            {if approve { tr.t("confirm.confirm_approval") } else { tr.t("confirm.confirm_rejection") }}
                                        </button>
                                    </PostForm>
                                })}
                                {(pending && !can_decide).then(|| view! { <p class="muted">{tr.t("confirm.may_not_decide")}</p> })}
                            </section>
                        }.into_any()
                    }
                    Err(e) => view! { <p class="error" role="alert" data-testid="confirm-message">{error_text_in(tr, &e)}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}
