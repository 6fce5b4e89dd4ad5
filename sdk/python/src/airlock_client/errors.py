"""What this package raises.

API refusals carry the server's machine-readable ``code`` (docs/agent-api.md); match on it,
not on the message. Calls that were not released (by ``gate``) raise a ``CallNotReleased``
subclass carrying the call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from .calls import ToolCall


class AirlockError(Exception):
    """Base of every error this package raises (bad arguments raise TypeError/ValueError)."""


class ApiError(AirlockError):
    """The server answered with an error: HTTP ``status`` and its ``code``.

    ``code`` is None only when the answer was not Airlock's JSON error (a proxy page, say).
    """

    def __init__(
        self,
        status: int,
        code: Optional[str],
        message: str,
        *,
        method: str,
        path: str,
        retry_after: Optional[float] = None,
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.method = method
        self.path = path
        self.retry_after = retry_after
        #: True when an earlier attempt of the same request may have reached the server
        #: (its answer lost), so the refusal may be about that attempt's effect.
        self.after_retry = False
        super().__init__(f"{method} {path}: {status} {code or 'error'}: {message}")


class AuthenticationError(ApiError):
    """401: signature, timestamp, agent or webhook-id refused (``bad_signature``,
    ``unknown_agent``, ``agent_disabled``, ``replay_mismatch``, …)."""


class InvalidRequestError(ApiError):
    """400 or 413: the request itself is wrong (``missing_field``, ``invalid_field``,
    ``payload_too_large``, ``invalid_wait``, …)."""


class NotFoundError(ApiError):
    """404 ``not_found``: no such call of this agent."""


class ConflictError(ApiError):
    """409: ``not_pending``, ``result_already_reported``, ``not_executable``, ``replayed``."""


class RateLimitedError(ApiError):
    """429 ``rate_limited`` or ``too_many_pending``; ``retry_after`` is in seconds."""


class ServerError(ApiError):
    """5xx, after the retries (``unavailable``)."""


class TransportError(AirlockError):
    """No answer from the server (connection refused, reset, timed out) after the retries."""


class ProtocolError(AirlockError):
    """The server answered something this client does not understand."""


class CallNotReleased(AirlockError):
    """A gated call may not run. ``call`` is the call as the server last reported it."""

    def __init__(self, call: "ToolCall", message: Optional[str] = None) -> None:
        self.call = call
        self.call_id = call.id
        self.status = call.status
        self.blocked_by = call.blocked_by
        self.reason = call.reason
        self.comment = call.comment
        self.decided_by = call.decided_by
        super().__init__(message or f"{call.tool} ({call.id}) was not released: {call.explanation}")


class CallDenied(CallNotReleased):
    """The policy denied the call (``blocked_by`` names the layer)."""


class CallRejected(CallNotReleased):
    """A reviewer rejected the call; their reason is ``comment``."""


class CallExpired(CallNotReleased):
    """Nobody decided before the call expired."""


class CallCancelled(CallNotReleased):
    """The call was cancelled (by this agent) before a decision."""


class CallSkipped(CallNotReleased):
    """A reviewer chose to skip the call: do not run it, carry on."""


class CallTimedOut(CallNotReleased):
    """No decision within the gate's ``max_wait``; the call was cancelled unless the gate
    was told not to (then ``call`` is still pending)."""
