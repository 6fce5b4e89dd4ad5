"""The ``gate`` decorator against a real server."""

from __future__ import annotations

import pytest
from support import Slot, decide_soon

from airlock_client import (
    Airlock,
    CallDenied,
    CallExpired,
    CallNotReleased,
    CallRejected,
    CallSkipped,
    CallTimedOut,
    Pending,
    current_call,
)


class Runs:
    """What a gated function was run with, and the call it ran under."""

    def __init__(self) -> None:
        self.calls: list = []

    def record(self, **arguments) -> None:
        call = current_call()
        assert call is not None, "current_call() inside a gated function"
        self.calls.append((arguments, call))

    @property
    def last_call_id(self) -> str:
        return self.calls[-1][1].id


def test_an_allowed_call_runs_with_its_arguments_and_the_result_is_reported(client: Airlock, session_id: str):
    runs = Runs()

    @client.gate("web_search", session_id=session_id, summarize=lambda hits: f"{len(hits)} results")
    def web_search(query: str) -> list:
        runs.record(query=query)
        return ["a", "b", "c"]

    assert web_search("rust") == ["a", "b", "c"]  # a positional argument is named
    assert web_search(query="tokio") == ["a", "b", "c"]
    assert [args for args, _ in runs.calls] == [{"query": "rust"}, {"query": "tokio"}]
    assert client.get(runs.last_call_id).result == "ok"
    assert current_call() is None
    assert web_search.__name__ == "web_search"


def test_a_denied_call_raises_and_never_runs(client: Airlock, session_id: str):
    runs = Runs()

    @client.gate("cancel_order", session_id=session_id)
    def cancel_order(order_id: str) -> None:
        runs.record(order_id=order_id)

    with pytest.raises(CallDenied) as e:
        cancel_order(order_id="AB12345678")
    assert e.value.blocked_by == "allowlist"
    assert "allowlist" in e.value.reason
    assert e.value.status == "denied"
    assert isinstance(e.value, CallNotReleased)
    assert runs.calls == []


def test_a_held_call_runs_once_a_reviewer_approves_while_the_gate_waits(client: Airlock, reviewer, session_id: str):
    runs = Runs()
    held = Slot()

    @client.gate("refund_order", session_id=lambda: session_id, reason="damaged item", on_pending=held.put)
    def refund_order(order_id: str, amount: int) -> str:
        runs.record(order_id=order_id, amount=amount)
        return "refunded"

    decision = decide_soon(reviewer, lambda: held.get().id, "approve")
    assert refund_order(order_id="AB12345678", amount=6000) == "refunded"
    decision.result()
    pending = held.get()
    assert isinstance(pending, Pending) and pending.expires_at
    arguments, call = runs.calls[0]
    assert arguments == {"order_id": "AB12345678", "amount": 6000}
    assert call.id == pending.id and call.status == "approved"
    assert client.get(call.id).result == "ok"


def test_the_reviewers_modified_arguments_reach_the_function(client: Airlock, reviewer, session_id: str):
    runs = Runs()
    held = Slot()

    @client.gate("refund_order", session_id=session_id, on_pending=held.put)
    def refund_order(order_id: str, amount: int) -> None:
        runs.record(order_id=order_id, amount=amount)

    edited = {"order_id": "AB12345678", "amount": 5500}
    decision = decide_soon(reviewer, lambda: held.get().id, "modify", text="partial refund", arguments=edited)
    refund_order(order_id="AB12345678", amount=6000)
    decision.result()
    arguments, call = runs.calls[0]
    assert arguments == edited
    assert call.status == "modified" and call.comment == "partial refund"


def test_a_rejection_raises_with_the_reviewers_reason(client: Airlock, reviewer, session_id: str):
    runs = Runs()
    held = Slot()

    @client.gate("refund_order", session_id=session_id, on_pending=held.put)
    def refund_order(order_id: str, amount: int) -> None:
        runs.record(order_id=order_id, amount=amount)

    decision = decide_soon(reviewer, lambda: held.get().id, "reject", text="order was never paid")
    with pytest.raises(CallRejected) as e:
        refund_order(order_id="AB12345678", amount=6000)
    decision.result()
    assert e.value.comment == "order was never paid"
    assert e.value.blocked_by == "rule"
    assert e.value.reason == "refund above 5000 needs a human"
    assert "order was never paid" in str(e.value)
    assert e.value.call_id == held.get().id
    assert runs.calls == []


def test_a_skipped_call_raises_call_skipped(client: Airlock, reviewer, session_id: str):
    held = Slot()

    @client.gate("refund_order", session_id=session_id, on_pending=held.put)
    def refund_order(order_id: str, amount: int) -> None:
        raise AssertionError("a skipped call must not run")

    decision = decide_soon(reviewer, lambda: held.get().id, "skip")
    with pytest.raises(CallSkipped) as e:
        refund_order(order_id="AB12345678", amount=6000)
    decision.result()
    assert e.value.status == "skipped"


def test_an_expired_call_raises_call_expired(client: Airlock, session_id: str):
    # The test policy lets move_to_trash wait one second.
    @client.gate("move_to_trash", session_id=session_id)
    def move_to_trash(paths: list) -> None:
        raise AssertionError("an expired call must not run")

    with pytest.raises(CallExpired) as e:
        move_to_trash(paths=["/data/shared/uploads/b.csv"])
    assert e.value.status == "expired"
    assert e.value.blocked_by == "rule"
    assert e.value.reason


def test_past_max_wait_the_call_is_cancelled_and_the_gate_raises(client: Airlock, session_id: str):
    held = Slot()

    @client.gate("refund_order", session_id=session_id, max_wait=1, on_pending=held.put)
    def refund_order(order_id: str, amount: int) -> None:
        raise AssertionError("an undecided call must not run")

    with pytest.raises(CallTimedOut) as e:
        refund_order(order_id="AB12345678", amount=6000)
    assert e.value.status == "cancelled"
    assert client.get(held.get().id).status == "cancelled"


def test_a_failing_function_is_reported_as_an_error_and_the_exception_kept(client: Airlock, session_id: str):
    runs = Runs()

    @client.gate("web_search", session_id=session_id)
    def web_search(query: str) -> None:
        runs.record(query=query)
        raise RuntimeError("search backend is down")

    with pytest.raises(RuntimeError, match="search backend is down"):
        web_search(query="rust")
    assert client.get(runs.last_call_id).result == "error"


def test_a_gate_refuses_what_it_cannot_propose(client: Airlock, session_id: str):
    with pytest.raises(TypeError, match=r"\*queries"):

        @client.gate("web_search", session_id=session_id)
        def varargs(*queries: str) -> None: ...

    with pytest.raises(TypeError, match="unknown option"):
        client.gate("web_search", session_id=session_id, sesion="typo")
    with pytest.raises(ValueError, match="session_id"):
        client.gate("web_search", session_id="")
    with pytest.raises(ValueError, match="max_wait"):
        client.gate("web_search", session_id=session_id, max_wait=-5)

    @client.gate("web_search", session_id=session_id)
    def web_search(query: str) -> None: ...

    with pytest.raises(TypeError, match="web_search"):
        web_search("a", "b")
