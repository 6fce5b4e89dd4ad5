"""A real Airlock server for the tests: the binary (AIRLOCK_BIN, default
<repo>/target/debug/airlock) on a free loopback port with a fresh SQLite file and key, an
agent and a reviewer made with its CLI, and the demo policy (with move_to_trash expiring
after a second, see support.py)."""

from __future__ import annotations

import os
import subprocess
import uuid

import pytest
from support import (
    AGENT,
    PASSWORD,
    REVIEWER,
    Reviewer,
    Server,
    airlock_bin,
    demo_policy_with_quick_trash_expiry,
    free_port,
    run_cli,
    wait_ready,
)

from airlock_client import Airlock


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory):
    binary = airlock_bin()
    if not binary.is_file():
        pytest.fail(f"no Airlock binary at {binary}: build it (scripts/build.sh) or set AIRLOCK_BIN")
    work = tmp_path_factory.mktemp("airlock")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRLOCK_")}
    env.update(
        AIRLOCK_DATABASE_URL=f"sqlite://{work}/airlock.db",
        AIRLOCK_KEY_FILE=str(work / "airlock.key"),
        AIRLOCK_BIND=f"127.0.0.1:{port}",
        AIRLOCK_COOKIE_SECURE="false",
        AIRLOCK_SITE_ROOT=str(work / "site"),  # the dashboard API needs no browser assets
        AIRLOCK_POLICY_FILE=str(demo_policy_with_quick_trash_expiry(work)),
    )
    run_cli(env, work, "user", "add", REVIEWER, "--role", "reviewer", "--password-stdin", stdin=PASSWORD + "\n")
    out = run_cli(env, work, "agent", "add", AGENT)
    secret = next((line.strip() for line in out.splitlines() if line.startswith("whsec_")), None)
    assert secret, "`airlock agent add` printed no whsec_ secret"
    log = open(work / "server.log", "wb")
    process = subprocess.Popen(
        [str(binary), "serve"], cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    srv = Server(url=url, agent=AGENT, secret=secret, work=work, env=env, process=process)
    try:
        wait_ready(srv)
        yield srv
    finally:
        process.terminate()
        try:
            process.wait(timeout=25)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@pytest.fixture(scope="session")
def reviewer(server: Server) -> Reviewer:
    return Reviewer(server.url, REVIEWER, PASSWORD)


@pytest.fixture
def client(server: Server) -> Airlock:
    return Airlock(server.url, server.agent, server.secret)


@pytest.fixture
def session_id(request: pytest.FixtureRequest) -> str:
    """A session of this test only (budgets and grants are per session)."""
    return f"{request.node.name[:60]}-{uuid.uuid4().hex[:8]}"
