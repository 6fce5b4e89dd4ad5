"""The asyncio client: the blocking client's requests run on a thread pool of its own.

A long-poll holds a thread for its whole wait, so the pool (``max_workers``) is separate
from the event loop's default executor and bounds how many requests run at once. A
cancelled coroutine returns at once; its request finishes in the background.
"""

from __future__ import annotations

import asyncio
import functools
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Mapping, Optional

from .calls import Decision, Denied, Pending, ToolCall
from .client import Airlock
from .gate import Gate


class AsyncAirlock:
    """``Airlock`` with coroutine methods; same arguments, plus ``max_workers``."""

    def __init__(
        self,
        url: str,
        agent: str,
        secret: str,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_retry_after: float = 5.0,
        max_workers: int = 16,
    ) -> None:
        if isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1:
            raise ValueError("max_workers must be a whole number >= 1")
        self.sync = Airlock(
            url, agent, secret, timeout=timeout, retries=retries, backoff=backoff, max_retry_after=max_retry_after
        )
        self._executor = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="airlock")

    @property
    def url(self) -> str:
        return self.sync.url

    @property
    def agent(self) -> str:
        return self.sync.agent

    def __repr__(self) -> str:
        return f"AsyncAirlock(url={self.url!r}, agent={self.agent!r})"

    async def __aenter__(self) -> "AsyncAirlock":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Stop the thread pool (requests under way finish first)."""
        self._executor.shutdown(wait=False)

    async def _run(self, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    async def propose(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        session_id: str,
        reason: Optional[str] = None,
        plan: Optional[str] = None,
        context: Optional[Mapping[str, Any]] = None,
        server: Optional[str] = None,
        trace_id: Optional[str] = None,
        turn_id: Optional[str] = None,
        on_behalf_of: Optional[str] = None,
        callback_url: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Decision:
        """See ``Airlock.propose``."""
        return await self._run(
            self.sync.propose,
            tool,
            arguments,
            session_id=session_id,
            reason=reason,
            plan=plan,
            context=context,
            server=server,
            trace_id=trace_id,
            turn_id=turn_id,
            on_behalf_of=on_behalf_of,
            callback_url=callback_url,
            idempotency_key=idempotency_key,
        )

    async def get(self, call_id: str) -> Decision:
        """See ``Airlock.get``."""
        return await self._run(self.sync.get, call_id)

    async def wait(self, call_id: str, seconds: float = 30.0) -> Decision:
        """See ``Airlock.wait``."""
        return await self._run(self.sync.wait, call_id, seconds)

    async def cancel(self, call_id: str) -> Denied:
        """See ``Airlock.cancel``."""
        return await self._run(self.sync.cancel, call_id)

    async def report_result(
        self,
        call_id: str,
        outcome: str = "ok",
        *,
        summary: Optional[str] = None,
        duration_ms: Optional[float] = None,
    ) -> ToolCall:
        """See ``Airlock.report_result``."""
        return await self._run(self.sync.report_result, call_id, outcome, summary=summary, duration_ms=duration_ms)

    def gate(
        self,
        tool: str,
        *,
        session_id: Any,
        max_wait: Optional[float] = None,
        cancel_on_timeout: bool = True,
        on_pending: Optional[Callable[[Pending], Any]] = None,
        summarize: Optional[Callable[[Any], Optional[str]]] = None,
        **propose_options: Any,
    ) -> Gate:
        """See ``Airlock.gate``; async functions' requests run on this client's pool."""
        return Gate(
            self.sync,
            tool,
            session_id=session_id,
            max_wait=max_wait,
            cancel_on_timeout=cancel_on_timeout,
            on_pending=on_pending,
            summarize=summarize,
            propose_options=propose_options,
            executor=self._executor,
        )
