"""Client for Airlock's agent API (docs/agent-api.md).

    from airlock_client import Airlock
    airlock = Airlock("http://127.0.0.1:3000", "support-bot", secret)
    decision = airlock.propose("web_search", {"query": "rust"}, session_id="s-1")
"""

import logging as _logging

from ._version import __version__
from .aio import AsyncAirlock
from .calls import EXECUTABLE, NOT_RELEASED, Allowed, Decision, Denied, Pending, ToolCall
from .client import Airlock
from .errors import (
    AirlockError,
    ApiError,
    AuthenticationError,
    CallCancelled,
    CallDenied,
    CallExpired,
    CallNotReleased,
    CallRejected,
    CallSkipped,
    CallTimedOut,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    ProtocolError,
    RateLimitedError,
    ServerError,
    TransportError,
)
from .gate import Gate, current_call

# A library leaves output to the application: nothing is printed unless it configures logging.
_logging.getLogger("airlock_client").addHandler(_logging.NullHandler())

__all__ = [
    "__version__",
    "Airlock",
    "AsyncAirlock",
    "Gate",
    "current_call",
    "Decision",
    "ToolCall",
    "Allowed",
    "Denied",
    "Pending",
    "EXECUTABLE",
    "NOT_RELEASED",
    "AirlockError",
    "ApiError",
    "AuthenticationError",
    "InvalidRequestError",
    "NotFoundError",
    "ConflictError",
    "RateLimitedError",
    "ServerError",
    "TransportError",
    "ProtocolError",
    "CallNotReleased",
    "CallDenied",
    "CallRejected",
    "CallExpired",
    "CallCancelled",
    "CallSkipped",
    "CallTimedOut",
]
