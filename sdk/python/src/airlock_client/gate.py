"""``@airlock.gate(tool, session_id=…)``: run a function only once Airlock released the call.

The wrapper proposes the call with the function's arguments (by parameter name) as the
tool's arguments, waits for a decision when it is held, runs the function with the
released arguments (a reviewer's edits included), reports the outcome, and raises a
``CallNotReleased`` subclass when the call may not run.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import time
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, Callable, Optional

from .calls import Allowed, Decision, Denied, Pending
from .errors import (
    AirlockError,
    CallCancelled,
    CallDenied,
    CallExpired,
    CallNotReleased,
    CallRejected,
    CallSkipped,
    CallTimedOut,
    ConflictError,
)

if TYPE_CHECKING:
    from .client import Airlock

log = logging.getLogger("airlock_client")

#: Longest summary the gate reports for a failure (the server accepts 16 KiB).
_ERROR_SUMMARY_CHARS = 2000

_current: contextvars.ContextVar[Optional[Allowed]] = contextvars.ContextVar("airlock_current_call", default=None)


def current_call() -> Optional[Allowed]:
    """Inside a gated function: the released call (its id, ``pinned`` URLs, who approved)."""
    return _current.get()


_RAISES = {
    "denied": CallDenied,
    "rejected": CallRejected,
    "expired": CallExpired,
    "cancelled": CallCancelled,
    "skipped": CallSkipped,
}


def not_released(call: Denied) -> CallNotReleased:
    """The exception for a call that may not run."""
    return _RAISES.get(call.status, CallDenied)(call)


class Gate:
    """Options of a gate; calling it on a function returns the gated function.

    - ``session_id`` and any of the proposal options (``reason``, ``plan``, ``context``,
      ``server``, ``trace_id``, ``turn_id``, ``on_behalf_of``, ``callback_url``) may be a
      value or a function of no arguments, called for each call (the current session, say).
    - ``max_wait``: seconds to wait for a reviewer; None waits until the call is decided or
      expires. When it passes, the call is cancelled (unless ``cancel_on_timeout`` is
      False) and ``CallTimedOut`` is raised.
    - ``on_pending(call)``: called when the call is held, before waiting (tell the user).
    - ``summarize(value)``: the result summary reported for a successful run (default
      none); a failure reports the exception's type and message.
    """

    def __init__(
        self,
        client: "Airlock",
        tool: str,
        *,
        session_id: Any,
        max_wait: Optional[float],
        cancel_on_timeout: bool,
        on_pending: Optional[Callable[[Pending], Any]],
        summarize: Optional[Callable[[Any], Optional[str]]],
        propose_options: dict,
        executor: Optional[Executor] = None,
    ) -> None:
        from .client import proposal_body

        number = isinstance(max_wait, (int, float)) and not isinstance(max_wait, bool)
        if max_wait is not None and (not number or max_wait < 0):
            raise ValueError("max_wait must be a number of seconds >= 0, or None to wait for the decision")
        unknown = set(propose_options) - _PROPOSE_OPTIONS
        if unknown:
            raise TypeError(f"gate() got unknown option(s): {', '.join(sorted(unknown))}")
        # Check what is fixed now, so a mistake fails at decoration rather than at a call.
        static = {k: v for k, v in propose_options.items() if not callable(v)}
        proposal_body(tool, {}, session_id="checked-per-call" if callable(session_id) else session_id, **static)
        self.client = client
        self.tool = tool
        self.session_id = session_id
        self.max_wait = max_wait
        self.cancel_on_timeout = cancel_on_timeout
        self.on_pending = on_pending
        self.summarize = summarize
        self.propose_options = propose_options
        self.executor = executor

    def __call__(self, fn: Callable) -> Callable:
        signature = inspect.signature(fn)
        for p in signature.parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL):
                what = f"*{p.name}" if p.kind is p.VAR_POSITIONAL else f"{p.name} (positional-only)"
                raise TypeError(
                    f"@gate({self.tool!r}) needs a function whose parameters can be passed by name; "
                    f"{fn.__qualname__} has {what}"
                )

        def arguments(args: tuple, kwargs: dict) -> dict:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{fn.__qualname__}: {e}") from None
            out = dict(bound.arguments)
            for p in signature.parameters.values():
                if p.kind is p.VAR_KEYWORD and p.name in out:
                    out.update(out.pop(p.name))
            return out

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def gated_async(*args: Any, **kwargs: Any) -> Any:
                call = await self._released_async(arguments(args, kwargs))
                token = _current.set(call)
                started = time.monotonic()
                try:
                    value = await fn(**call.arguments)
                except BaseException as e:
                    await self._blocking(self._report_error, call, e, started)
                    raise
                finally:
                    _current.reset(token)
                await self._blocking(self._report_ok, call, value, started)
                return value

            gated_async.gate = self  # type: ignore[attr-defined]
            return gated_async

        @functools.wraps(fn)
        def gated(*args: Any, **kwargs: Any) -> Any:
            call = self._released(arguments(args, kwargs))
            token = _current.set(call)
            started = time.monotonic()
            try:
                value = fn(**call.arguments)
            except BaseException as e:
                self._report_error(call, e, started)
                raise
            finally:
                _current.reset(token)
            self._report_ok(call, value, started)
            return value

        gated.gate = self  # type: ignore[attr-defined]
        return gated

    # The decision -------------------------------------------------------------------

    def _options(self) -> dict:
        options = {k: (v() if callable(v) else v) for k, v in self.propose_options.items()}
        options["session_id"] = self.session_id() if callable(self.session_id) else self.session_id
        return options

    def _released(self, arguments: dict) -> Allowed:
        call = self.client.propose(self.tool, arguments, **self._options())
        if isinstance(call, Pending):
            if self.on_pending is not None:
                self.on_pending(call)
            call = self._waited(call)
        return self._judge(call)

    async def _released_async(self, arguments: dict) -> Allowed:
        options = self._options()
        call = await self._blocking(self.client.propose, self.tool, arguments, **options)
        if isinstance(call, Pending):
            if self.on_pending is not None:
                shown = self.on_pending(call)
                if inspect.isawaitable(shown):
                    await shown
            call = await self._blocking(self._waited, call)
        return self._judge(call)

    def _waited(self, call: Pending) -> Decision:
        """Wait for the decision; past ``max_wait`` cancel the call (blocking)."""
        seconds = float("inf") if self.max_wait is None else self.max_wait
        decided = self.client.wait(call.id, seconds)
        if not isinstance(decided, Pending):
            return decided
        if not self.cancel_on_timeout:
            raise CallTimedOut(decided, f"{call.tool} ({call.id}): no decision within {self.max_wait} s; still pending")
        try:
            cancelled = self.client.cancel(call.id)
        except ConflictError as e:
            if e.code != "not_pending":
                raise
            return self.client.get(call.id)  # decided just now: judge that decision
        raise CallTimedOut(cancelled, f"{call.tool} ({call.id}): no decision within {self.max_wait} s; cancelled")

    def _judge(self, call: Decision) -> Allowed:
        if isinstance(call, Allowed):
            return call
        if isinstance(call, Pending):  # only when the server keeps answering pending
            raise CallTimedOut(call, f"{call.tool} ({call.id}) is still pending")
        raise not_released(call)

    # Reporting ------------------------------------------------------------------------

    def _report_ok(self, call: Allowed, value: Any, started: float) -> None:
        summary = None
        if self.summarize is not None:
            try:
                summary = self.summarize(value)
            except Exception as e:  # a broken summary must not turn a success into a failure
                log.warning("summarize() for %s failed: %s", call.id, type(e).__name__)
        self._report(call, "ok", summary, started)

    def _report_error(self, call: Allowed, error: BaseException, started: float) -> None:
        text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        self._report(call, "error", text[:_ERROR_SUMMARY_CHARS], started)

    def _report(self, call: Allowed, outcome: str, summary: Optional[str], started: float) -> None:
        # The function has run: a failed report is logged, never raised, so the caller
        # does not take a done action for a failed one and repeat it.
        if summary is not None:
            summary = summary.encode()[: 16 * 1024].decode("utf-8", "ignore")
        try:
            self.client.report_result(
                call.id, outcome, summary=summary, duration_ms=(time.monotonic() - started) * 1000
            )
        except (AirlockError, ValueError, TypeError) as e:
            log.warning("reporting the result of %s failed: %s", call.id, e)

    async def _blocking(self, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, functools.partial(fn, *args, **kwargs))


_PROPOSE_OPTIONS = frozenset(
    {"reason", "plan", "context", "server", "trace_id", "turn_id", "on_behalf_of", "callback_url"}
)
