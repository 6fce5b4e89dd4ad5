"""A call as the agent API reports it, typed by what the agent may do with it.

- ``Allowed``: execute with ``arguments`` (status allowed, approved, modified — then the
  reviewer's version —, or overridden).
- ``Denied``: do not execute (status denied, rejected, expired, cancelled or skipped);
  ``explanation`` says why in one sentence.
- ``Pending``: held for a reviewer until ``expires_at``; wait for the decision.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Union

from .errors import ProtocolError

#: Statuses whose ``arguments`` may be executed.
EXECUTABLE = frozenset({"allowed", "approved", "modified", "overridden"})
#: Final statuses that must not be executed.
NOT_RELEASED = frozenset({"denied", "rejected", "expired", "cancelled", "skipped"})


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """Fields every answer carries (see ``GET /api/v1/openapi.json``, schema ToolCall)."""

    id: str
    status: str
    tool: str
    session_id: str
    #: Why the policy decided or held the call (for a reviewer's rejection see ``comment``).
    reason: str
    #: The layer that denied or held the call: allowlist, schema, path_guard,
    #: command_guard, url_guard, budget or rule; None when the policy allowed it.
    blocked_by: Optional[str] = None
    rule: Optional[str] = None
    risk: Optional[str] = None
    policy_version: Optional[str] = None
    approvers_required: int = 0
    created_at: Optional[str] = None
    decided_at: Optional[str] = None
    #: ``user:<name>``, ``agent:<id>``, ``grant:<id>`` or ``system``; None for the policy.
    decided_by: Optional[str] = None
    #: policy, grant, reviewer, override, expiry or agent; None while pending.
    source: Optional[str] = None
    #: The reviewer's comment (the reason of a rejection).
    comment: Optional[str] = None
    #: ``ok`` or ``error`` once a result was reported.
    result: Optional[str] = None
    trace_id: Optional[str] = None
    server: Optional[str] = None
    poll_url: Optional[str] = None
    #: True when the server answered a retried proposal (same webhook-id) from its record.
    replayed: bool = False
    #: The answer as sent.
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def explanation(self) -> str:
        """One sentence on the state of the call."""
        return f"{self.status}: {self.reason}"


@dataclass(frozen=True, kw_only=True)
class Allowed(ToolCall):
    """The agent may execute the call with ``arguments``."""

    arguments: dict = field(default_factory=dict)
    #: URLs the policy's URL guard resolved: fetch ``url`` connecting only to ``addresses``.
    pinned: tuple = ()

    @property
    def explanation(self) -> str:
        if self.status == "allowed":
            return f"allowed: {self.reason}"
        who = self.decided_by or "a reviewer"
        edited = " with changed arguments" if self.status == "modified" else ""
        return f"{self.status} by {who}{edited}"


@dataclass(frozen=True, kw_only=True)
class Denied(ToolCall):
    """The call must not be executed."""

    @property
    def explanation(self) -> str:
        who = self.decided_by or "a reviewer"
        if self.status == "denied":
            return f"denied by the policy ({self.blocked_by}): {self.reason}"
        if self.status == "rejected":
            return f"rejected by {who}: {self.comment or 'no reason given'}"
        if self.status == "expired":
            return f"expired before anyone decided (held because: {self.reason})"
        if self.status == "cancelled":
            return f"cancelled by {who}"
        if self.status == "skipped":
            note = f": {self.comment}" if self.comment else ""
            return f"skipped by {who} (do not run it){note}"
        return f"{self.status} (not executable): {self.reason}"


@dataclass(frozen=True, kw_only=True)
class Pending(ToolCall):
    """Held for a reviewer; ``wait`` for the decision."""

    #: RFC 3339 (UTC) time at which the call expires undecided.
    expires_at: Optional[str] = None

    @property
    def explanation(self) -> str:
        return f"pending until {self.expires_at}: {self.reason}"


Decision = Union[Allowed, Denied, Pending]

_OPTIONAL_STR = (
    "blocked_by", "rule", "risk", "policy_version", "created_at", "decided_at", "decided_by",
    "source", "comment", "result", "trace_id", "server", "poll_url",
)


def parse_call(body: Any, *, replayed: bool = False) -> Decision:
    """The typed call from an answer's JSON body; ProtocolError if it is not one."""
    if not isinstance(body, dict):
        raise ProtocolError(f"expected a tool call object, got {type(body).__name__}")
    for key in ("id", "status", "tool", "session_id"):
        if not isinstance(body.get(key), str):
            raise ProtocolError(f"the answer has no string field {key!r}")
    common: dict = {
        "id": body["id"],
        "status": body["status"],
        "tool": body["tool"],
        "session_id": body["session_id"],
        "reason": body.get("reason") if isinstance(body.get("reason"), str) else "",
        "approvers_required": body.get("approvers_required") or 0,
        "replayed": replayed,
        "raw": body,
    }
    for key in _OPTIONAL_STR:
        value = body.get(key)
        common[key] = value if isinstance(value, str) else None
    status = body["status"]
    if status in EXECUTABLE:
        arguments = body.get("arguments")
        if not isinstance(arguments, dict):
            raise ProtocolError(f"call {body['id']} is {status} but carries no arguments object")
        pinned = body.get("pinned") or []
        return Allowed(**common, arguments=arguments, pinned=tuple(pinned))
    if status == "pending":
        expires_at = body.get("expires_at")
        return Pending(**common, expires_at=expires_at if isinstance(expires_at, str) else None)
    # Final states, and any status this version does not know: never executable.
    return Denied(**common)
