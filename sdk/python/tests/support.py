"""Helpers of the tests: the server's CLI, a signed-in reviewer, background threads."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

REPO = Path(__file__).resolve().parents[3]
AGENT = "sdk-agent"
REVIEWER = "sdk-reviewer"
PASSWORD = "sdk reviewer password 0123456789"


def airlock_bin() -> Path:
    return Path(os.environ.get("AIRLOCK_BIN") or REPO / "target" / "debug" / "airlock")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def demo_policy_with_quick_trash_expiry(work: Path) -> Path:
    """The demo policy, with move_to_trash expiring after one second (so expiry can be
    tested) and everything else as shipped."""
    src = (REPO / "policies" / "demo.toml").read_text()
    changed = src.replace('expiry = "30m"', 'expiry = "1s"')
    assert changed.count('expiry = "1s"') == 1, "policies/demo.toml: move_to_trash's expiry changed"
    path = work / "policy.toml"
    path.write_text(changed)
    return path


@dataclass
class Server:
    url: str
    agent: str
    secret: str
    work: Path
    env: dict
    process: subprocess.Popen

    def cli(self, *args: str, stdin: Optional[str] = None) -> str:
        return run_cli(self.env, self.work, *args, stdin=stdin)

    def log_tail(self, lines: int = 60) -> str:
        text = (self.work / "server.log").read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])


def run_cli(env: dict, cwd: Path, *args: str, stdin: Optional[str] = None) -> str:
    r = subprocess.run(
        [str(airlock_bin()), *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=60
    )
    if r.returncode != 0:
        # stderr only: `agent add` prints a secret on stdout.
        command = " ".join(args[:2])
        raise RuntimeError(f"airlock {command} failed ({r.returncode}): {r.stderr[-2000:]}")
    return r.stdout


def wait_ready(srv: Server, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        if srv.process.poll() is not None:
            pytest.fail(f"the server exited ({srv.process.returncode}):\n{srv.log_tail()}")
        try:
            with urllib.request.urlopen(srv.url + "/readyz", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"the server did not become ready:\n{srv.log_tail()}")
        time.sleep(0.1)


class Reviewer:
    """A reviewer signed in to the dashboard, deciding through its API as the review page
    does: sign-in form (with its CSRF token), the session's CSRF token, calls/decide."""

    def __init__(self, base: str, username: str, password: str) -> None:
        self.base = base
        self.username = username
        self._http = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        with self._http.open(base + "/login") as r:
            page = r.read().decode()
        token = re.search(r'name="csrf_token" value="([^"]*)"', page)
        assert token, "the sign-in page has no csrf_token"
        form = {"username": username, "password": password, "csrf_token": token.group(1)}
        with self._post("/login", form) as r:
            assert r.status == 200, r.status
        with self._http.open(base + "/api/session") as r:
            self._csrf = json.load(r)["csrf_token"]

    def _post(self, path: str, form: dict):
        req = urllib.request.Request(
            self.base + path,
            data=urllib.parse.urlencode(form).encode(),
            headers={"Origin": self.base, "accept": "application/json"},
        )
        return self._http.open(req)

    def decide(self, call_id: str, verdict: str, text: str = "", arguments: Optional[dict] = None) -> dict:
        form = {"csrf_token": self._csrf, "id": call_id, "verdict": verdict, "text": text}
        if arguments is not None:
            form["arguments"] = json.dumps(arguments)
        try:
            with self._post("/api/calls/decide", form) as r:
                out = json.load(r)
        except urllib.error.HTTPError as e:
            raise AssertionError(f"decide {verdict} {call_id}: {e.code} {e.read()[:300]!r}") from None
        assert out.get("ok") is True, f"decide {verdict} {call_id}: {out}"
        return out


class Background:
    """Run ``fn`` on a thread; ``result()`` joins it and re-raises what it raised."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._value: Any = None
        self._error: Optional[BaseException] = None

        def run() -> None:
            try:
                self._value = fn()
            except BaseException as e:  # handed to the test's thread
                self._error = e

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def result(self, timeout: float = 60.0) -> Any:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the background task did not finish"
        if self._error is not None:
            raise self._error
        return self._value


#: Time given to a long-poll to reach the server before a reviewer decides, so the
#: decision lands while the agent is waiting. The tests hold either way: a decision made
#: before the poll starts is answered at once.
POLL_START = 0.3


def decide_soon(reviewer: Reviewer, call_id: Any, verdict: str, **kw: Any) -> Background:
    """A reviewer decides ``call_id`` (a str, or a function returning it once known)."""

    def run() -> dict:
        cid = call_id() if callable(call_id) else call_id
        time.sleep(POLL_START)
        return reviewer.decide(cid, verdict, **kw)

    return Background(run)


class Slot:
    """A value one thread hands to another."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._value: Any = None

    def put(self, value: Any) -> None:
        self._value = value
        self._event.set()

    def get(self, timeout: float = 30.0) -> Any:
        assert self._event.wait(timeout), "nothing was handed over"
        return self._value
