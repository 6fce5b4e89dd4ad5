"""The blocking client against a real server."""

from __future__ import annotations

import uuid

import pytest
from support import decide_soon

from airlock_client import (
    Airlock,
    Allowed,
    AuthenticationError,
    ConflictError,
    Denied,
    InvalidRequestError,
    NotFoundError,
    Pending,
)

REFUND = {"order_id": "AB12345678", "amount": 6000}  # over 5000: held for a reviewer


def held(client: Airlock, session_id: str) -> Pending:
    call = client.propose("refund_order", REFUND, session_id=session_id, reason="customer reported a damaged item")
    assert isinstance(call, Pending), call
    return call


def test_an_allowed_call_carries_the_arguments_to_execute(client: Airlock, session_id: str):
    call = client.propose(
        "web_search", {"query": "rust"}, session_id=session_id, trace_id="trace-1", reason="research"
    )
    assert isinstance(call, Allowed)
    assert call.status == "allowed"
    assert call.arguments == {"query": "rust"}
    assert call.blocked_by is None
    assert call.source == "policy"
    assert call.id.startswith("tc_")
    assert call.session_id == session_id and call.trace_id == "trace-1"
    assert call.policy_version.startswith("sha256:")
    assert call.replayed is False
    assert client.get(call.id) == call


@pytest.mark.parametrize(
    "tool, arguments, layer",
    [
        ("cancel_order", {"order_id": "AB12345678"}, "allowlist"),
        ("query_order", {"order_id": "short"}, "schema"),
        ("read_file", {"path": "/etc/shadow"}, "path_guard"),
        ("execute_command", {"command": "sudo rm -rf /"}, "command_guard"),
        ("web_fetch", {"url": "http://169.254.169.254/latest/meta-data"}, "url_guard"),
    ],
)
def test_a_denied_call_names_the_layer_that_blocked_it(client: Airlock, session_id: str, tool, arguments, layer):
    call = client.propose(tool, arguments, session_id=session_id)
    assert isinstance(call, Denied)
    assert call.status == "denied"
    assert call.blocked_by == layer
    assert call.reason
    assert layer in call.explanation and call.reason in call.explanation


def test_a_held_call_released_by_a_reviewer_while_wait_waits(client: Airlock, reviewer, session_id: str):
    call = held(client, session_id)
    assert call.blocked_by == "rule" and call.rule == "refund_over_5000"
    assert call.expires_at and call.expires_at.endswith("Z")
    decision = decide_soon(reviewer, call.id, "approve")
    released = client.wait(call.id, 30)
    decision.result()
    assert isinstance(released, Allowed)
    assert released.status == "approved"
    assert released.arguments == REFUND
    assert released.decided_by == f"user:{reviewer.username}"
    assert released.source == "reviewer"


def test_a_modified_call_gives_the_reviewers_arguments(client: Airlock, reviewer, session_id: str):
    call = held(client, session_id)
    decision = decide_soon(reviewer, call.id, "modify", text="half now", arguments={**REFUND, "amount": 5500})
    released = client.wait(call.id, 30)
    decision.result()
    assert isinstance(released, Allowed)
    assert released.status == "modified"
    assert released.arguments == {"order_id": "AB12345678", "amount": 5500}
    assert released.comment == "half now"


def test_a_rejection_reaches_the_waiting_agent_with_the_reason(client: Airlock, reviewer, session_id: str):
    call = held(client, session_id)
    decision = decide_soon(reviewer, call.id, "reject", text="refund already issued")
    answer = client.wait(call.id, 30)
    decision.result()
    assert isinstance(answer, Denied)
    assert answer.status == "rejected"
    assert answer.comment == "refund already issued"
    assert answer.blocked_by == "rule"
    assert "refund already issued" in answer.explanation
    assert answer.raw["arguments"] is None


def test_wait_answers_pending_when_nobody_decides_in_time(client: Airlock, session_id: str):
    call = held(client, session_id)
    still = client.wait(call.id, 1)
    assert isinstance(still, Pending) and still.id == call.id
    client.cancel(call.id)


def test_an_unanswered_call_expires(client: Airlock, session_id: str):
    # The test policy lets move_to_trash wait one second.
    call = client.propose("move_to_trash", {"paths": ["/data/shared/uploads/a.csv"]}, session_id=session_id)
    assert isinstance(call, Pending)
    answer = client.wait(call.id, 30)
    assert isinstance(answer, Denied)
    assert answer.status == "expired"
    assert answer.decided_by == "system" and answer.source == "expiry"
    assert "expired" in answer.explanation


def test_cancel_ends_a_pending_call_once(client: Airlock, session_id: str):
    call = held(client, session_id)
    cancelled = client.cancel(call.id)
    assert isinstance(cancelled, Denied)
    assert cancelled.status == "cancelled"
    assert cancelled.decided_by == f"agent:{client.agent}"
    assert isinstance(client.wait(call.id, 5), Denied)
    with pytest.raises(ConflictError) as e:
        client.cancel(call.id)
    assert e.value.code == "not_pending" and e.value.status == 409


def test_report_result_records_the_outcome_once(client: Airlock, session_id: str):
    call = client.propose("web_search", {"query": "rust"}, session_id=session_id)
    reported = client.report_result(call.id, "ok", summary="3 results", duration_ms=12.6)
    assert reported.result == "ok"
    assert client.get(call.id).result == "ok"
    with pytest.raises(ConflictError) as e:
        client.report_result(call.id, "error")
    assert e.value.code == "result_already_reported"

    pending = held(client, session_id)
    with pytest.raises(ConflictError) as e:
        client.report_result(pending.id, "ok")
    assert e.value.code == "not_executable"
    client.cancel(pending.id)


def test_a_failed_execution_is_reported_as_an_error(client: Airlock, session_id: str):
    call = client.propose("web_search", {"query": "rust"}, session_id=session_id)
    assert client.report_result(call.id, "error", summary="search backend timed out").result == "error"


def test_the_same_idempotency_key_gives_the_same_call(client: Airlock, session_id: str):
    key = f"msg_{uuid.uuid4().hex}"
    first = client.propose("refund_order", REFUND, session_id=session_id, idempotency_key=key)
    again = client.propose("refund_order", REFUND, session_id=session_id, idempotency_key=key)
    assert again.id == first.id
    assert (first.replayed, again.replayed) == (False, True)
    # The same key for another call is refused, not taken for a retry.
    with pytest.raises(AuthenticationError) as e:
        client.propose("refund_order", {**REFUND, "amount": 60}, session_id=session_id, idempotency_key=key)
    assert e.value.code == "replay_mismatch"
    client.cancel(first.id)


def test_a_bad_secret_is_refused_with_its_code(server, session_id: str):
    other_secret = "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODk="
    stranger = Airlock(server.url, server.agent, other_secret)
    with pytest.raises(AuthenticationError) as e:
        stranger.propose("web_search", {"query": "x"}, session_id=session_id)
    assert e.value.status == 401 and e.value.code == "bad_signature"
    assert "QUJD" not in str(e.value)

    nobody = Airlock(server.url, "no-such-agent", server.secret)
    with pytest.raises(AuthenticationError) as e:
        nobody.get("tc_0")
    assert e.value.code == "unknown_agent"


def test_another_agents_or_a_missing_call_is_not_found(client: Airlock):
    with pytest.raises(NotFoundError) as e:
        client.get("tc_does_not_exist")
    assert e.value.code == "not_found" and e.value.status == 404


def test_the_servers_refusal_of_a_field_carries_its_code(client: Airlock, session_id: str):
    with pytest.raises(InvalidRequestError) as e:
        client.propose("web_search", {"query": "x"}, session_id=session_id, turn_id="   ")
    assert e.value.code == "invalid_field" and "turn_id" in e.value.message
    with pytest.raises(InvalidRequestError) as e:
        client.propose("web_search", {"query": "x"}, session_id=session_id, callback_url="http://127.0.0.1:9/hook")
    assert e.value.code == "invalid_callback_url"


def test_bad_input_is_refused_before_anything_is_sent(server, client: Airlock, session_id: str):
    secret_body = server.secret.removeprefix("whsec_")
    for bad_secret in ("", server.secret.removeprefix("whsec_"), "whsec_not base64!", "whsec_"):
        with pytest.raises(ValueError) as e:
            Airlock(server.url, server.agent, bad_secret)
        assert secret_body not in str(e.value)
    with pytest.raises(ValueError):
        Airlock("localhost:3000", server.agent, server.secret)
    with pytest.raises(ValueError):
        Airlock(server.url, "", server.secret)
    with pytest.raises(ValueError):
        Airlock(server.url, server.agent, server.secret, retries=-1)
    with pytest.raises(TypeError, match="arguments must be a mapping"):
        client.propose("web_search", ["rust"], session_id=session_id)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="session_id"):
        client.propose("web_search", {"query": "x"}, session_id="")
    with pytest.raises(TypeError, match="JSON-serialisable"):
        client.propose("web_search", {"query": object()}, session_id=session_id)
    with pytest.raises(TypeError, match="context"):
        client.propose("web_search", {"query": "x"}, session_id=session_id, context="trusted")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seconds"):
        client.wait("tc_x", -1)
    with pytest.raises(ValueError, match="outcome"):
        client.report_result("tc_x", "maybe")
    with pytest.raises(ValueError, match="idempotency_key"):
        client.propose("web_search", {"query": "x"}, session_id=session_id, idempotency_key="x" * 300)


def test_the_secret_never_shows_in_repr(server, client: Airlock):
    assert server.secret not in repr(client)
    assert server.secret.removeprefix("whsec_") not in repr(client) + repr(vars(client))
