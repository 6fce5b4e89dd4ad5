"""A FastAPI + pydantic gateway doing the durable work of Airlock's proposal endpoint, run
by scripts/bench-wrk.sh for comparison only (never part of Airlock): the Standard Webhooks
signature over the body (HMAC-SHA256, ±300 s), an allowlist with "ask" tools held, a strict
pydantic model of the body, one SQLite row per call (WAL, synchronous=FULL, committed
before the answer) and a JSON answer with the decision.

    GATEWAY_SECRET=whsec_… GATEWAY_DB=/tmp/g.db uvicorn fastapi_gateway:app --port 8000
"""

import base64
import hashlib
import hmac
import os
import sqlite3
import threading
import time
import uuid
from typing import Any, Optional

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

SECRET = base64.b64decode(os.environ["GATEWAY_SECRET"].removeprefix("whsec_"))
AUTO = {"read_file", "list_dir", "web_fetch", "web_search", "query_order", "create_reply_draft", "refund_order"}
ASK = {"write_file", "move_to_trash", "execute_command", "send_email"}


class Proposal(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: str = Field(min_length=1, max_length=200)
    tool: str = Field(min_length=1, max_length=200)
    arguments: dict[str, Any]
    trace_id: Optional[str] = Field(default=None, max_length=200)
    turn_id: Optional[str] = Field(default=None, max_length=200)
    server: Optional[str] = Field(default=None, max_length=200)
    reason: Optional[str] = Field(default=None, max_length=16384)
    plan: Optional[str] = Field(default=None, max_length=16384)
    on_behalf_of: Optional[str] = Field(default=None, max_length=200)
    context: Optional[dict[str, Any]] = None
    callback_url: Optional[str] = None


db = sqlite3.connect(os.environ["GATEWAY_DB"], check_same_thread=False, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=FULL")
db.execute("PRAGMA busy_timeout=5000")
db.execute(
    "CREATE TABLE IF NOT EXISTS calls (id TEXT PRIMARY KEY, message_id TEXT NOT NULL UNIQUE, session_id TEXT,"
    " tool TEXT, arguments TEXT, status TEXT, reason TEXT, created_at_ms INTEGER)"
)
lock = threading.Lock()


def store(row: tuple) -> None:
    with lock:
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
        db.execute("COMMIT")


app = FastAPI()


def refuse(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


@app.post("/api/v1/tool-calls")
async def propose(request: Request) -> JSONResponse:
    body = await request.body()
    msg_id = request.headers.get("webhook-id", "")
    ts = request.headers.get("webhook-timestamp", "")
    sig = request.headers.get("webhook-signature", "")
    if not (msg_id and ts.isdigit() and abs(time.time() - int(ts)) <= 300):
        return refuse(401, "bad_timestamp", "missing or stale signature headers")
    mac = hmac.new(SECRET, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    if not any(hmac.compare_digest(base64.b64encode(mac).decode(), s.removeprefix("v1,")) for s in sig.split()):
        return refuse(401, "bad_signature", "no signature matches")
    try:
        p = Proposal.model_validate_json(body)
    except ValidationError as e:
        return refuse(400, "invalid_body", str(e.errors()[0]["msg"]))
    if p.tool in AUTO:
        status, reason = "allowed", "allowed by policy"
    elif p.tool in ASK:
        status, reason = "pending", "held for review"
    else:
        status, reason = "denied", "not on the allowlist"
    call_id = f"tc_{uuid.uuid4().hex}"
    row = (call_id, msg_id, p.session_id, p.tool, p.model_dump_json(include={"arguments"}), status, reason,
           int(time.time() * 1000))
    try:
        await run_in_threadpool(store, row)
    except sqlite3.IntegrityError:
        return refuse(409, "replayed", "webhook-id already used")
    return JSONResponse({"id": call_id, "status": status, "reason": reason, "tool": p.tool,
                         "session_id": p.session_id})
