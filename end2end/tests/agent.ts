// A test agent: signed requests to the agent API (Standard Webhooks HMAC-SHA256), as
// docs/agent-api.md describes. The agent and its secret are created by scripts/e2e.sh.
import { createHmac, randomUUID } from 'node:crypto';

const BASE = process.env.AIRLOCK_BASE_URL!;
const AGENT = process.env.AIRLOCK_E2E_AGENT || 'e2e-agent';
const SECRET = process.env.AIRLOCK_E2E_AGENT_SECRET || '';

function sign(msgId: string, ts: string, payload: string): string {
  const key = Buffer.from(SECRET.replace(/^whsec_/, ''), 'base64');
  return 'v1,' + createHmac('sha256', key).update(`${msgId}.${ts}.${payload}`).digest('base64');
}

async function send(method: string, path: string, body: string, signed: string): Promise<any> {
  if (!SECRET) throw new Error('AIRLOCK_E2E_AGENT_SECRET is not set (run scripts/e2e.sh)');
  const msgId = `msg_${randomUUID()}`;
  const ts = String(Math.floor(Date.now() / 1000));
  const r = await fetch(BASE + path, {
    method,
    headers: {
      'content-type': 'application/json',
      'airlock-agent': AGENT,
      'webhook-id': msgId,
      'webhook-timestamp': ts,
      'webhook-signature': sign(msgId, ts, signed),
    },
    body: method === 'GET' ? undefined : body,
  });
  const json = await r.json();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

/** Propose a tool call; returns the decision body. */
export function propose(call: Record<string, unknown>): Promise<any> {
  const body = JSON.stringify(call);
  return send('POST', '/api/v1/tool-calls', body, body);
}

/** Read a call, waiting up to `wait` seconds for its decision. */
export function poll(id: string, wait = 0): Promise<any> {
  const path = `/api/v1/tool-calls/${id}?wait=${wait}`;
  return send('GET', path, '', `GET ${path}\n`);
}

/** A session id no other test uses. */
export function session(name: string): string {
  return `${name}-${randomUUID().slice(0, 8)}`;
}
