"""Retries through a proxy that loses answers: the request reaches the real server, the
client sees a 503 or a dropped connection and tries again."""

from __future__ import annotations

import http.client
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional

import pytest
from support import free_port

from airlock_client import Airlock, Allowed, Denied, Pending, RateLimitedError, ServerError, TransportError

FORWARDED = (
    "content-type", "accept", "user-agent", "airlock-agent", "webhook-id", "webhook-timestamp", "webhook-signature",
)


class LossyProxy:
    """Forwards to ``upstream``. ``fault(method, path)`` picks what happens to a request:
    None (pass it through), "lose-503" / "lose-drop" (forward it, then answer 503 or close
    the connection instead of the server's answer), or "refuse-503", "refuse-429" (pause
    0 s) / "refuse-429-long" (pause 30 s): answer without forwarding. Every request is
    recorded with its webhook-id."""

    def __init__(self, upstream: str, fault: Callable[[str, str, int], Optional[str]]) -> None:
        self.upstream = urllib.parse.urlsplit(upstream)
        self.fault = fault
        self.seen: list[tuple[str, str, str]] = []
        self.upstream_answers: list[dict] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                proxy._handle(self)

            do_POST = do_GET

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def count(self, method: str, path_prefix: str) -> int:
        return sum(1 for m, p, _ in self.seen if m == method and p.startswith(path_prefix))

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        body = h.rfile.read(int(h.headers.get("content-length") or 0))
        with self._lock:
            n = sum(1 for m, p, _ in self.seen if m == h.command and p.split("?")[0] == h.path.split("?")[0])
            self.seen.append((h.command, h.path, h.headers.get("webhook-id", "")))
        fault = self.fault(h.command, h.path, n)
        if fault in ("refuse-503", "refuse-429", "refuse-429-long"):
            status, code = (503, "unavailable") if fault == "refuse-503" else (429, "rate_limited")
            payload = json.dumps({"error": {"code": code, "message": "from the test proxy"}}).encode()
            h.send_response(status)
            h.send_header("content-type", "application/json")
            if status == 429:
                h.send_header("retry-after", "30" if fault == "refuse-429-long" else "0")
            h.send_header("content-length", str(len(payload)))
            h.end_headers()
            h.wfile.write(payload)
            return
        conn = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=90)
        headers = {k: h.headers[k] for k in FORWARDED if h.headers.get(k) is not None}
        conn.request(h.command, h.path, body=body if h.command != "GET" else None, headers=headers)
        r = conn.getresponse()
        answer = r.read()
        replayed = r.getheader("idempotent-replayed")
        conn.close()
        with self._lock:
            self.upstream_answers.append({"status": r.status, "body": json.loads(answer), "replayed": replayed})
        if fault == "lose-drop":
            h.close_connection = True  # no answer at all: the client sees the connection close
            return
        if fault == "lose-503":
            answer, status, replayed = b'{"error":{"code":"unavailable","message":"lost"}}', 503, None
        else:
            status = r.status
        h.send_response(status)
        h.send_header("content-type", "application/json")
        if replayed:
            h.send_header("idempotent-replayed", replayed)
        h.send_header("content-length", str(len(answer)))
        h.end_headers()
        h.wfile.write(answer)


@pytest.fixture
def proxy_for(server):
    proxies: list[LossyProxy] = []

    def make(fault: Callable[[str, str, int], Optional[str]]) -> LossyProxy:
        p = LossyProxy(server.url, fault)
        proxies.append(p)
        return p

    yield make
    for p in proxies:
        p.close()


def first(method: str, path_part: str, fault: str) -> Callable[[str, str, int], Optional[str]]:
    """The first request with ``method`` whose path contains ``path_part`` gets ``fault``."""
    return lambda m, p, n: fault if (m == method and path_part in p and n == 0) else None


def agent(server, url: str, retries: int = 3) -> Airlock:
    return Airlock(url, server.agent, server.secret, retries=retries, backoff=0.01)


@pytest.mark.parametrize("fault", ["lose-503", "lose-drop"])
def test_a_proposal_whose_answer_was_lost_is_retried_with_the_same_webhook_id(server, proxy_for, session_id, fault):
    proxy = proxy_for(first("POST", "/api/v1/tool-calls", fault))
    call = agent(server, proxy.url).propose("web_search", {"query": "retry"}, session_id=session_id)
    assert isinstance(call, Allowed)
    (_, _, id1), (_, _, id2) = proxy.seen
    assert id1 == id2, "a proposal's retry keeps its webhook-id"
    stored, replayed = proxy.upstream_answers
    assert stored["status"] == 200 and stored["replayed"] is None
    assert replayed["replayed"] == "true"
    assert call.id == stored["body"]["id"], "the retry answers with the call the lost attempt stored"
    assert call.replayed is True


def test_a_held_proposal_retried_after_its_decision_answers_with_the_call_as_stored(server, proxy_for, session_id):
    proxy = proxy_for(first("POST", "/api/v1/tool-calls", "lose-503"))
    call = agent(server, proxy.url).propose(
        "refund_order", {"order_id": "AB12345678", "amount": 6000}, session_id=session_id
    )
    assert isinstance(call, Pending) and call.replayed
    assert call.id == proxy.upstream_answers[0]["body"]["id"]
    agent(server, server.url).cancel(call.id)


def test_a_read_is_retried_with_a_new_webhook_id(server, proxy_for, session_id):
    direct = agent(server, server.url)
    call = direct.propose("web_search", {"query": "read"}, session_id=session_id)
    proxy = proxy_for(first("GET", "/api/v1/tool-calls/", "lose-503"))
    again = agent(server, proxy.url).get(call.id)
    assert again.id == call.id
    ids = [i for m, _, i in proxy.seen if m == "GET"]
    assert len(ids) == 2 and ids[0] != ids[1], "reads are single-use per webhook-id"


def test_a_cancel_whose_answer_was_lost_still_reports_the_cancellation(server, proxy_for, session_id):
    direct = agent(server, server.url)
    call = direct.propose("refund_order", {"order_id": "AB12345678", "amount": 6000}, session_id=session_id)
    proxy = proxy_for(first("POST", "/cancel", "lose-drop"))
    cancelled = agent(server, proxy.url).cancel(call.id)
    assert isinstance(cancelled, Denied) and cancelled.status == "cancelled"
    assert proxy.count("POST", f"/api/v1/tool-calls/{call.id}/cancel") == 2


def test_a_result_whose_answer_was_lost_is_not_reported_twice(server, proxy_for, session_id):
    direct = agent(server, server.url)
    call = direct.propose("web_search", {"query": "result"}, session_id=session_id)
    proxy = proxy_for(first("POST", "/result", "lose-503"))
    reported = agent(server, proxy.url).report_result(call.id, "ok", summary="done")
    assert reported.result == "ok"
    assert direct.get(call.id).result == "ok"


def test_a_server_that_stays_unavailable_gives_a_server_error_after_the_retries(server, proxy_for, session_id):
    proxy = proxy_for(lambda m, p, n: "refuse-503")
    with pytest.raises(ServerError) as e:
        agent(server, proxy.url, retries=2).propose("web_search", {"query": "x"}, session_id=session_id)
    assert e.value.status == 503 and e.value.code == "unavailable"
    assert len(proxy.seen) == 3
    assert len({i for _, _, i in proxy.seen}) == 1


def test_a_short_rate_limit_pause_is_waited_out_and_a_long_one_raised(server, proxy_for, session_id):
    proxy = proxy_for(first("POST", "/api/v1/tool-calls", "refuse-429"))
    call = agent(server, proxy.url).propose("web_search", {"query": "x"}, session_id=session_id)
    assert isinstance(call, Allowed)

    proxy = proxy_for(lambda m, p, n: "refuse-429-long")
    with pytest.raises(RateLimitedError) as e:
        agent(server, proxy.url).propose("web_search", {"query": "x"}, session_id=session_id)
    assert e.value.code == "rate_limited" and e.value.retry_after == 30
    assert len(proxy.seen) == 1, "a pause longer than max_retry_after is the caller's to wait"


def test_no_server_gives_a_transport_error_after_the_retries(server):
    nowhere = Airlock(f"http://127.0.0.1:{free_port()}", server.agent, server.secret, retries=2, backoff=0.01)
    with pytest.raises(TransportError, match="after 3 attempt"):
        nowhere.get("tc_x")
