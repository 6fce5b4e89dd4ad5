"""The blocking client."""

from __future__ import annotations

import math
import time
import urllib.parse
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from ._transport import MAX_MESSAGE_ID_BYTES, PROPOSE_PATH, Transport, encode_json
from .calls import Decision, Denied, Pending, ToolCall, parse_call
from .errors import ConflictError, ProtocolError

if TYPE_CHECKING:
    from .gate import Gate

#: Longest single long-poll the server accepts, seconds.
MAX_POLL_SECONDS = 60
#: Largest result summary the server accepts, bytes.
MAX_SUMMARY_BYTES = 16 * 1024
#: Extra time the HTTP request gets beyond the long-poll itself.
_POLL_MARGIN = 15.0


class Airlock:
    """A client for one agent of one Airlock server.

    ``timeout`` bounds each HTTP request (long-polls get their wait on top). Connection
    failures and 5xx answers are retried ``retries`` times with exponential ``backoff``
    (seconds), as are 429 answers whose Retry-After is at most ``max_retry_after``.
    The secret is kept only as key bytes and never appears in errors, logs or ``repr``.
    """

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
    ) -> None:
        self._t = Transport(
            url, agent, secret, timeout=timeout, retries=retries, backoff=backoff, max_retry_after=max_retry_after
        )

    @property
    def url(self) -> str:
        return self._t.base

    @property
    def agent(self) -> str:
        return self._t.agent

    def __repr__(self) -> str:
        return f"Airlock(url={self.url!r}, agent={self.agent!r})"

    def propose(
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
        """Propose a tool call; the answer is the decision: Allowed, Denied or Pending.

        ``idempotency_key`` is the webhook-id: the same key with the same call within ten
        minutes answers with the call already stored (``replayed`` is then True), and with
        a different call is refused (``replay_mismatch``). Without one a fresh id is used
        (and kept across this method's own retries).
        """
        body = proposal_body(
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
        )
        if idempotency_key is not None:
            _check_message_id(idempotency_key)
        answer = self._t.send("POST", PROPOSE_PATH, body, message_id=idempotency_key)
        return parse_call(answer.body, replayed=answer.replayed)

    def get(self, call_id: str) -> Decision:
        """The call as it stands now."""
        return self._poll(call_id, 0)

    def wait(self, call_id: str, seconds: float = 30.0) -> Decision:
        """Wait up to ``seconds`` for a decision; answers at once when one is made.

        Returns the call as it then stands: still ``Pending`` if nobody decided in time.
        Waits longer than the server's 60-second long-poll are made of several polls.
        """
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds < 0 or math.isnan(seconds):
            raise ValueError("seconds must be a number >= 0")
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            chunk = MAX_POLL_SECONDS
            if math.isfinite(remaining):
                chunk = min(MAX_POLL_SECONDS, max(0, math.ceil(remaining)))
            started = time.monotonic()
            call = self._poll(call_id, chunk)
            if not isinstance(call, Pending) or chunk == 0 or time.monotonic() >= deadline:
                return call
            if time.monotonic() - started < 1.0:
                # Answered early while still pending (the server is stopping): do not spin.
                time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))

    def cancel(self, call_id: str) -> Denied:
        """End a pending call (status ``cancelled``). ConflictError ``not_pending`` if it
        was already decided."""
        target = f"{_call_path(call_id)}/cancel"
        try:
            answer = self._t.send("POST", target)
        except ConflictError as e:
            # A retry of a cancel whose answer was lost finds the call already cancelled.
            if e.code == "not_pending" and e.after_retry:
                call = self.get(call_id)
                if isinstance(call, Denied) and call.status == "cancelled" and call.decided_by == f"agent:{self.agent}":
                    return call
            raise
        call = parse_call(answer.body)
        if not isinstance(call, Denied):
            raise ProtocolError(f"cancelling {call_id} answered status {call.status}")
        return call

    def report_result(
        self,
        call_id: str,
        outcome: str = "ok",
        *,
        summary: Optional[str] = None,
        duration_ms: Optional[float] = None,
    ) -> ToolCall:
        """Record what happened when the released call ran: ``outcome`` ``ok`` or ``error``,
        a ``summary`` (at most 16 KiB; stored redacted) and ``duration_ms``. Once per call
        (ConflictError ``result_already_reported``); only released calls
        (ConflictError ``not_executable``)."""
        body = result_body(outcome, summary=summary, duration_ms=duration_ms)
        try:
            answer = self._t.send("POST", f"{_call_path(call_id)}/result", body)
        except ConflictError as e:
            # A retry of a report whose answer was lost finds it already recorded.
            if e.code == "result_already_reported" and e.after_retry:
                call = self.get(call_id)
                if call.result == outcome:
                    return call
            raise
        return parse_call(answer.body)

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
    ) -> "Gate":
        """A decorator that runs the function only once Airlock released the call.

        See ``airlock_client.gate.Gate`` for the options.
        """
        from .gate import Gate

        return Gate(
            self,
            tool,
            session_id=session_id,
            max_wait=max_wait,
            cancel_on_timeout=cancel_on_timeout,
            on_pending=on_pending,
            summarize=summarize,
            propose_options=propose_options,
        )

    def _poll(self, call_id: str, wait: int) -> Decision:
        answer = self._t.send(
            "GET", f"{_call_path(call_id)}?wait={wait}", timeout=max(self._t.timeout, wait + _POLL_MARGIN)
        )
        return parse_call(answer.body)


def _call_path(call_id: str) -> str:
    if not isinstance(call_id, str) or not call_id:
        raise ValueError("call_id must be a call id such as 'tc_…'")
    return f"{PROPOSE_PATH}/{urllib.parse.quote(call_id, safe='')}"


def _check_message_id(key: Any) -> None:
    if not isinstance(key, str) or not key.strip():
        raise ValueError("idempotency_key must be a non-empty str")
    if len(key.encode()) > MAX_MESSAGE_ID_BYTES:
        raise ValueError(f"idempotency_key must be at most {MAX_MESSAGE_ID_BYTES} bytes")
    if any(c in key for c in "\r\n\0"):
        raise ValueError("idempotency_key must not contain line breaks or NUL")


def _optional_str(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, not {type(value).__name__}")


def proposal_body(tool: str, arguments: Mapping[str, Any], *, session_id: str, **optional: Any) -> bytes:
    """The JSON body of a proposal, after checking the types the server insists on."""
    if not isinstance(tool, str) or not tool.strip():
        raise ValueError("tool must be the tool's name as the policy spells it")
    if not isinstance(arguments, Mapping):
        raise TypeError(f"arguments must be a mapping (a JSON object), not {type(arguments).__name__}")
    if not isinstance(session_id, str) or not session_id.strip():
        raise ValueError("session_id must be a non-empty str (the agent's conversation or run)")
    context = optional.pop("context", None)
    if context is not None and not isinstance(context, Mapping):
        raise TypeError(f"context must be a mapping (a JSON object) or None, not {type(context).__name__}")
    call: dict = {"session_id": session_id, "tool": tool, "arguments": dict(arguments)}
    for name, value in optional.items():
        _optional_str(name, value)
        if value is not None:
            call[name] = value
    if context is not None:
        call["context"] = dict(context)
    return encode_json(call, "the call (arguments and context)")


def result_body(outcome: str, *, summary: Optional[str], duration_ms: Optional[float]) -> bytes:
    if outcome not in ("ok", "error"):
        raise ValueError(f"outcome must be 'ok' or 'error', not {outcome!r}")
    body: dict = {"outcome": outcome}
    if summary is not None:
        if not isinstance(summary, str):
            raise TypeError(f"summary must be a str or None, not {type(summary).__name__}")
        if len(summary.encode()) > MAX_SUMMARY_BYTES:
            raise ValueError(f"summary must be at most {MAX_SUMMARY_BYTES} bytes (UTF-8)")
        body["summary"] = summary
    if duration_ms is not None:
        if isinstance(duration_ms, bool) or not isinstance(duration_ms, (int, float)) or not duration_ms >= 0:
            raise ValueError("duration_ms must be a number >= 0")
        body["duration_ms"] = int(round(duration_ms))
    return encode_json(body, "the result")
