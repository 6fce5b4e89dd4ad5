"""A minimal Airlock client using only the Python standard library.

    AIRLOCK_URL=http://127.0.0.1:3000 AIRLOCK_AGENT=my-agent AIRLOCK_SECRET=whsec_... \
        python3 airlock_client.py
"""
import base64, hashlib, hmac, json, os, time, urllib.error, urllib.request, uuid

URL = os.environ.get("AIRLOCK_URL", "http://127.0.0.1:3000")
AGENT = os.environ["AIRLOCK_AGENT"]
KEY = base64.b64decode(os.environ["AIRLOCK_SECRET"].removeprefix("whsec_"))


def send(method, path, body=b"", sign_body_only=False):
    """Sign and send one request. The proposal POST signs its body (Standard Webhooks);
    every other request signs "METHOD path?query\\nbody" so it cannot be replayed elsewhere."""
    msg_id, ts = f"msg_{uuid.uuid4().hex}", str(int(time.time()))
    payload = body if sign_body_only else f"{method} {path}\n".encode() + body
    mac = hmac.new(KEY, f"{msg_id}.{ts}.".encode() + payload, hashlib.sha256).digest()
    req = urllib.request.Request(URL + path, data=body or None, method=method, headers={
        "content-type": "application/json",
        "airlock-agent": AGENT,
        "webhook-id": msg_id,
        "webhook-timestamp": ts,
        "webhook-signature": "v1," + base64.b64encode(mac).decode(),
    })
    try:
        with urllib.request.urlopen(req, timeout=75) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        raise RuntimeError(json.load(e)["error"]) from None


def propose(call):
    return send("POST", "/api/v1/tool-calls", json.dumps(call).encode(), sign_body_only=True)


def wait_for_decision(call_id, seconds=30):
    return send("GET", f"/api/v1/tool-calls/{call_id}?wait={seconds}")


if __name__ == "__main__":
    decision = propose({"session_id": "s-1", "tool": "refund_order",
                        "arguments": {"order_id": "AB12345678", "amount": 7500},
                        "reason": "customer reported a damaged item"})
    print(decision["status"], decision.get("blocked_by"), decision["reason"])
    if decision["status"] == "pending":
        decision = wait_for_decision(decision["id"], seconds=int(os.environ.get("AIRLOCK_WAIT", "30")))
        print("after waiting:", decision["status"])
    if decision["arguments"] is not None:
        # ... execute the tool with decision["arguments"], then report what happened:
        send("POST", f"/api/v1/tool-calls/{decision['id']}/result",
             json.dumps({"outcome": "ok", "summary": "refund issued", "duration_ms": 42}).encode())
