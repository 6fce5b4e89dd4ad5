"""The asyncio client and gate against a real server."""

from __future__ import annotations

import asyncio

import pytest
from support import Slot, decide_soon

from airlock_client import (
    Airlock,
    Allowed,
    AsyncAirlock,
    AuthenticationError,
    CallRejected,
    ConflictError,
    Denied,
    Pending,
    current_call,
)

REFUND = {"order_id": "AB12345678", "amount": 6000}


@pytest.fixture
def aclient(server):
    client = AsyncAirlock(server.url, server.agent, server.secret)
    yield client
    client.close()


def test_propose_wait_cancel_and_report_as_coroutines(aclient: AsyncAirlock, reviewer, session_id: str):
    async def scenario():
        allowed = await aclient.propose("web_search", {"query": "rust"}, session_id=session_id)
        assert isinstance(allowed, Allowed) and allowed.arguments == {"query": "rust"}
        assert (await aclient.report_result(allowed.id, "ok", summary="2 results")).result == "ok"

        denied = await aclient.propose("cancel_order", {"order_id": "AB12345678"}, session_id=session_id)
        assert isinstance(denied, Denied) and denied.blocked_by == "allowlist"

        held = await aclient.propose("refund_order", REFUND, session_id=session_id)
        assert isinstance(held, Pending)
        decision = decide_soon(reviewer, held.id, "approve")
        released = await aclient.wait(held.id, 30)
        decision.result()
        assert isinstance(released, Allowed) and released.status == "approved"
        assert released.arguments == REFUND

        other = await aclient.propose("refund_order", REFUND, session_id=session_id)
        cancelled = await aclient.cancel(other.id)
        assert cancelled.status == "cancelled"
        with pytest.raises(ConflictError) as e:
            await aclient.cancel(other.id)
        assert e.value.code == "not_pending"
        assert (await aclient.get(other.id)).status == "cancelled"

    asyncio.run(scenario())


def test_many_waits_run_at_once_without_blocking_the_loop(aclient: AsyncAirlock, reviewer, session_id: str):
    async def scenario():
        held = [await aclient.propose("refund_order", REFUND, session_id=session_id) for _ in range(3)]
        waits = [asyncio.ensure_future(aclient.wait(c.id, 30)) for c in held]
        decisions = [decide_soon(reviewer, c.id, "approve") for c in held]
        released = await asyncio.gather(*waits)
        for d in decisions:
            d.result()
        assert [c.status for c in released] == ["approved"] * 3

    asyncio.run(scenario())


def test_a_bad_secret_is_refused_asynchronously(server, session_id: str):
    async def scenario():
        async with AsyncAirlock(server.url, server.agent, "whsec_" + "QUJDREVGR0hJSktMTU5PUA==") as stranger:
            with pytest.raises(AuthenticationError) as e:
                await stranger.propose("web_search", {"query": "x"}, session_id=session_id)
            assert e.value.code == "bad_signature"

    asyncio.run(scenario())


def test_an_async_gated_function_runs_once_approved(aclient: AsyncAirlock, reviewer, session_id: str):
    held = Slot()
    runs: list = []

    async def announce(call: Pending) -> None:
        held.put(call)

    @aclient.gate("refund_order", session_id=session_id, on_pending=announce)
    async def refund_order(order_id: str, amount: int) -> str:
        await asyncio.sleep(0)
        runs.append(({"order_id": order_id, "amount": amount}, current_call()))
        return "refunded"

    decision = decide_soon(reviewer, lambda: held.get().id, "modify", arguments={**REFUND, "amount": 5500})
    assert asyncio.run(refund_order(order_id="AB12345678", amount=6000)) == "refunded"
    decision.result()
    arguments, call = runs[0]
    assert arguments == {"order_id": "AB12345678", "amount": 5500}
    assert call.status == "modified"
    assert asyncio.run(aclient.get(call.id)).result == "ok"


def test_an_async_gated_function_raises_on_rejection(aclient: AsyncAirlock, reviewer, session_id: str):
    held = Slot()

    @aclient.gate("refund_order", session_id=session_id, on_pending=held.put)
    async def refund_order(order_id: str, amount: int) -> None:
        raise AssertionError("a rejected call must not run")

    decision = decide_soon(reviewer, lambda: held.get().id, "reject", text="duplicate request")
    with pytest.raises(CallRejected) as e:
        asyncio.run(refund_order(order_id="AB12345678", amount=6000))
    decision.result()
    assert e.value.comment == "duplicate request"


def test_the_blocking_clients_gate_also_takes_async_functions(client: Airlock, session_id: str):
    @client.gate("web_search", session_id=session_id)
    async def web_search(query: str) -> str:
        return f"results for {query}"

    assert asyncio.run(web_search(query="rust")) == "results for rust"
