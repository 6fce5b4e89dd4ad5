"""Signing and sending agent API requests, with retries.

Signatures follow Standard Webhooks (docs/agent-api.md §2): HMAC-SHA256 over
``"{webhook-id}.{timestamp}.{payload}"`` with the secret's bytes. The payload is the body
for a proposal; every other request signs ``"{METHOD} {path?query}\\n{body}"``.

Retries: a proposal is retried with the same webhook-id and body, which the server answers
from its record (idempotent). Reads, cancels and results are single-use per webhook-id, so
their retries are signed with a new one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import http.client
import json
import logging
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ._version import __version__
from .errors import (
    ApiError,
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    ProtocolError,
    RateLimitedError,
    ServerError,
    TransportError,
)

log = logging.getLogger("airlock_client")

PROPOSE_PATH = "/api/v1/tool-calls"
MAX_MESSAGE_ID_BYTES = 256


def decode_secret(secret: str) -> bytes:
    """The key bytes of a ``whsec_…`` secret. Errors never repeat the secret."""
    if not isinstance(secret, str):
        raise TypeError("secret must be a str (the whsec_… value `airlock agent add` printed)")
    secret = secret.strip()
    if not secret.startswith("whsec_"):
        raise ValueError("secret must start with 'whsec_' (the value `airlock agent add` printed)")
    try:
        key = base64.b64decode(secret[len("whsec_"):], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("secret is not valid base64 after 'whsec_'") from None
    if not key:
        raise ValueError("secret is empty after 'whsec_'")
    return key


def check_base_url(url: str) -> str:
    """The server's base URL without a trailing slash."""
    if not isinstance(url, str):
        raise TypeError("url must be a str such as 'http://127.0.0.1:3000'")
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"url must be an http(s) URL such as 'http://127.0.0.1:3000', not {url!r}")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError("url must not carry a query, fragment or credentials")
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"


def sign(key: bytes, message_id: str, timestamp: str, payload: bytes) -> str:
    mac = hmac.new(key, f"{message_id}.{timestamp}.".encode() + payload, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    replayed: bool


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # A redirect on the agent API is a misconfiguration; following it would re-send a
    # signed request somewhere else.
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_ERRORS = {
    400: InvalidRequestError,
    401: AuthenticationError,
    404: NotFoundError,
    409: ConflictError,
    413: InvalidRequestError,
    429: RateLimitedError,
}

# URLError, ConnectionError and TimeoutError are OSErrors; HTTPError is answered in _once.
_CONNECTION_ERRORS = (OSError, http.client.HTTPException)


class Transport:
    def __init__(
        self,
        url: str,
        agent: str,
        secret: str,
        *,
        timeout: float,
        retries: int,
        backoff: float,
        max_retry_after: float,
    ) -> None:
        if not isinstance(agent, str) or not agent.strip():
            raise ValueError("agent must be the agent's id (as given to `airlock agent add`)")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            raise ValueError("retries must be a whole number >= 0")
        if not isinstance(backoff, (int, float)) or isinstance(backoff, bool) or backoff < 0:
            raise ValueError("backoff must be a number of seconds >= 0")
        self.base = check_base_url(url)
        self.agent = agent.strip()
        self._key = decode_secret(secret)
        self.timeout = float(timeout)
        self.retries = retries
        self.backoff = float(backoff)
        self.max_retry_after = float(max_retry_after)
        self._opener = urllib.request.build_opener(_NoRedirect)
        self._user_agent = f"airlock-client-python/{__version__}"

    def send(
        self,
        method: str,
        target: str,
        body: bytes = b"",
        *,
        message_id: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> Answer:
        """Send one signed request, retrying connection failures, 5xx and short 429s.

        ``target`` is the path with its query. Raises an ApiError subclass for refusals,
        TransportError when no answer came.
        """
        proposal = method == "POST" and target == PROPOSE_PATH
        msg_id = message_id or new_message_id()
        attempt = 0
        while True:
            if attempt and not proposal:
                msg_id = new_message_id()
            try:
                status, headers, raw = self._once(method, target, body, msg_id, timeout or self.timeout)
            except _CONNECTION_ERRORS as e:
                if attempt >= self.retries:
                    raise TransportError(
                        f"{method} {_path(target)}: no answer from {self.base} after "
                        f"{attempt + 1} attempt(s): {_reason(e)}"
                    ) from None
                delay = self._delay(attempt)
                log.warning("%s %s: %s; retrying in %.2f s", method, _path(target), _reason(e), delay)
            else:
                parsed = _json(raw)
                if 200 <= status < 300:
                    if parsed is _NOT_JSON:
                        raise ProtocolError(f"{method} {_path(target)}: {status} answer is not JSON")
                    replayed = headers.get("idempotent-replayed", "").lower() == "true"
                    return Answer(status, parsed, replayed)
                error = _error(status, headers, parsed, raw, method, target)
                retry_after = error.retry_after
                retryable = status >= 500 or (
                    status == 429 and retry_after is not None and retry_after <= self.max_retry_after
                )
                if not retryable or attempt >= self.retries:
                    error.after_retry = attempt > 0
                    raise error
                delay = retry_after if retry_after is not None else self._delay(attempt)
                log.warning("%s %s: %s %s; retrying in %.2f s", method, _path(target), status, error.code, delay)
            time.sleep(delay)
            attempt += 1

    def _once(self, method: str, target: str, body: bytes, msg_id: str, timeout: float):
        ts = str(int(time.time()))
        payload = body if (method == "POST" and target == PROPOSE_PATH) else f"{method} {target}\n".encode() + body
        headers = {
            "content-type": "application/json",
            "accept": "application/json",
            "user-agent": self._user_agent,
            "airlock-agent": self.agent,
            "webhook-id": msg_id,
            "webhook-timestamp": ts,
            "webhook-signature": sign(self._key, msg_id, ts, payload),
        }
        data = body if method != "GET" else None
        req = urllib.request.Request(self.base + target, data=data, method=method, headers=headers)
        try:
            with self._opener.open(req, timeout=timeout) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            try:
                return e.code, e.headers, e.read()
            finally:
                e.close()

    def _delay(self, attempt: int) -> float:
        # Exponential with jitter, so many agents retrying after one hiccup spread out.
        return min(10.0, self.backoff * (2**attempt)) * random.uniform(0.5, 1.0)


_NOT_JSON = object()


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return _NOT_JSON


def _path(target: str) -> str:
    return target.split("?", 1)[0]


def _reason(e: BaseException) -> str:
    if isinstance(e, urllib.error.URLError) and not isinstance(e, urllib.error.HTTPError):
        return str(e.reason)
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _error(status: int, headers: Mapping[str, str], parsed: Any, raw: bytes, method: str, target: str) -> ApiError:
    code: Optional[str] = None
    message = ""
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        code = parsed["error"].get("code") if isinstance(parsed["error"].get("code"), str) else None
        message = str(parsed["error"].get("message") or "")
    if not message:
        text = raw.decode("utf-8", "replace").strip()
        message = text[:200] if text else http.client.responses.get(status, "error")
    retry_after: Optional[float] = None
    value = headers.get("retry-after")
    if value:
        try:
            retry_after = max(0.0, float(value))
        except ValueError:
            retry_after = None  # an HTTP date: not something Airlock sends
    cls = _ERRORS.get(status, ServerError if status >= 500 else ApiError)
    return cls(status, code, message, method=method, path=_path(target), retry_after=retry_after)


def encode_json(value: Any, what: str) -> bytes:
    """Compact UTF-8 JSON; the exact bytes are what a retry must repeat."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what} must be JSON-serialisable (dicts, lists, str, int, float, bool, None): {e}") from None
