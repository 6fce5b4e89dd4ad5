// A dependency-free client for Airlock's agent API (docs/agent-api.md), for Node 20+.
//
//   import { createClient, isExecutable } from './airlock.mjs';
//   const airlock = createClient({ url: 'http://127.0.0.1:3000', agent: 'support-bot', secret });
//   let call = await airlock.propose({ session_id: 's-1', tool: 'refund_order',
//                                      arguments: { order_id: 'AB12345678', amount: 7500 } });
//   if (call.status === 'pending') call = await airlock.wait(call.id, 300);
//   if (isExecutable(call)) { /* run with call.arguments */ await airlock.reportResult(call.id, { outcome: 'ok' }); }
//
// The module-level propose / get / wait / cancel / reportResult use a client configured
// from AIRLOCK_URL, AIRLOCK_AGENT and AIRLOCK_SECRET. Bodies and answers are the API's JSON
// as documented; refusals throw AirlockError with the server's machine-readable `code`.
import { createHmac, randomUUID } from 'node:crypto';

const PROPOSE_PATH = '/api/v1/tool-calls';
const MAX_POLL_SECONDS = 60; // the server's longest long-poll
const POLL_MARGIN_MS = 15_000; // what a long-poll's HTTP request gets beyond its wait

/** Statuses whose `arguments` may be executed. */
export const EXECUTABLE = Object.freeze(['allowed', 'approved', 'modified', 'overridden']);

/** Whether the agent may run the call (with `call.arguments`). */
export function isExecutable(call) {
  return EXECUTABLE.includes(call?.status) && call.arguments != null;
}

/** A refusal (`status`, `code` as the API answered) or no answer at all (`status` 0). */
export class AirlockError extends Error {
  constructor(message, { status = 0, code = null, retryAfter = null, afterRetry = false, cause } = {}) {
    super(message, cause ? { cause } : undefined);
    this.name = 'AirlockError';
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
    // An earlier attempt may have reached the server and its answer been lost.
    this.afterRetry = afterRetry;
  }
}

function decodeSecret(secret) {
  if (typeof secret !== 'string' || !secret.startsWith('whsec_')) {
    throw new TypeError("secret must be the 'whsec_…' value `airlock agent add` printed");
  }
  const b64 = secret.slice('whsec_'.length).trim();
  const key = Buffer.from(b64, 'base64');
  // Buffer.from ignores what is not base64; a secret that does not round-trip is mangled.
  if (key.length === 0 || key.toString('base64').replace(/=+$/, '') !== b64.replace(/=+$/, '')) {
    throw new TypeError("secret is not valid base64 after 'whsec_'");
  }
  return key;
}

function baseUrl(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    throw new TypeError(`url must be an http(s) URL such as 'http://127.0.0.1:3000', not ${JSON.stringify(url)}`);
  }
  if (!['http:', 'https:'].includes(u.protocol) || u.username || u.password || u.search || u.hash) {
    throw new TypeError('url must be an http(s) URL without credentials, query or fragment');
  }
  return u.origin + u.pathname.replace(/\/+$/, '');
}

function callPath(id) {
  if (typeof id !== 'string' || id === '') throw new TypeError("call id must be a string such as 'tc_…'");
  return `${PROPOSE_PATH}/${encodeURIComponent(id)}`;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A client for one agent. Options: `url`, `agent`, `secret` (required); `timeoutMs` per
 * request (long-polls get their wait on top), `retries` and `backoffMs` for connection
 * failures, 5xx and 429 answers whose Retry-After is at most `maxRetryAfterMs`.
 */
export function createClient({
  url, agent, secret, timeoutMs = 30_000, retries = 3, backoffMs = 500, maxRetryAfterMs = 5_000,
} = {}) {
  const base = baseUrl(url);
  if (typeof agent !== 'string' || agent.trim() === '') throw new TypeError('agent must be the agent id');
  if (!Number.isInteger(retries) || retries < 0) throw new TypeError('retries must be a whole number >= 0');
  const key = decodeSecret(secret);

  function sign(msgId, ts, payload) {
    return 'v1,' + createHmac('sha256', key).update(`${msgId}.${ts}.`).update(payload).digest('base64');
  }

  // One signed request. A proposal signs its body and keeps its webhook-id across retries
  // (the server answers a retry from its record); every other request signs
  // "METHOD path?query\nbody" and needs a new webhook-id per attempt (single use).
  async function send(method, target, body = '', { messageId, extraMs = 0 } = {}) {
    const proposal = method === 'POST' && target === PROPOSE_PATH;
    const bytes = Buffer.from(body, 'utf8');
    let msgId = messageId || `msg_${randomUUID()}`;
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0 && !proposal) msgId = `msg_${randomUUID()}`;
      const ts = String(Math.floor(Date.now() / 1000));
      const payload = proposal ? bytes : Buffer.concat([Buffer.from(`${method} ${target}\n`), bytes]);
      let r;
      try {
        r = await fetch(base + target, {
          method,
          redirect: 'manual', // a redirect would re-send a signed request elsewhere
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            'airlock-agent': agent,
            'webhook-id': msgId,
            'webhook-timestamp': ts,
            'webhook-signature': sign(msgId, ts, payload),
          },
          body: method === 'GET' ? undefined : bytes,
          signal: AbortSignal.timeout(timeoutMs + extraMs),
        });
      } catch (e) {
        if (attempt >= retries) {
          throw new AirlockError(`${method} ${target.split('?')[0]}: no answer from ${base} after ${attempt + 1} attempt(s): ${e.cause?.message || e.message}`, { cause: e });
        }
        await sleep(backoff(attempt));
        continue;
      }
      const text = await r.text();
      let json = null;
      try { json = JSON.parse(text); } catch { /* not JSON: reported below */ }
      if (r.ok) {
        if (json === null) throw new AirlockError(`${method} ${target}: ${r.status} answer is not JSON`, { status: r.status });
        return json;
      }
      const retryAfterHeader = r.headers.get('retry-after');
      const retryAfter = retryAfterHeader !== null && /^\d+(\.\d+)?$/.test(retryAfterHeader) ? Number(retryAfterHeader) : null;
      const retryable = r.status >= 500 || (r.status === 429 && retryAfter !== null && retryAfter * 1000 <= maxRetryAfterMs);
      if (!retryable || attempt >= retries) {
        const code = typeof json?.error?.code === 'string' ? json.error.code : null;
        const message = json?.error?.message || text.slice(0, 200) || `HTTP ${r.status}`;
        throw new AirlockError(`${method} ${target.split('?')[0]}: ${r.status} ${code || 'error'}: ${message}`,
          { status: r.status, code, retryAfter, afterRetry: attempt > 0 });
      }
      await sleep(retryAfter !== null ? retryAfter * 1000 : backoff(attempt));
    }
  }

  function backoff(attempt) {
    // Exponential with jitter, so agents retrying after one hiccup spread out.
    return Math.min(10_000, backoffMs * 2 ** attempt) * (0.5 + Math.random() / 2);
  }

  /** Propose a tool call ({ session_id, tool, arguments, … }); answers with the decision. */
  async function propose(call, { idempotencyKey } = {}) {
    if (call === null || typeof call !== 'object' || Array.isArray(call)) throw new TypeError('call must be an object');
    if (typeof call.tool !== 'string' || call.tool === '') throw new TypeError('call.tool must be the tool name');
    if (typeof call.session_id !== 'string' || call.session_id === '') throw new TypeError('call.session_id must be a non-empty string');
    if (call.arguments === null || typeof call.arguments !== 'object' || Array.isArray(call.arguments)) {
      throw new TypeError('call.arguments must be an object');
    }
    if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || idempotencyKey === '')) {
      throw new TypeError('idempotencyKey must be a non-empty string');
    }
    return send('POST', PROPOSE_PATH, JSON.stringify(call), { messageId: idempotencyKey });
  }

  /** The call as it stands now. */
  function get(id) {
    return send('GET', `${callPath(id)}?wait=0`);
  }

  /** Wait up to `seconds` for a decision (answers as soon as one is made); the call as it
   *  then stands, still pending if nobody decided in time. */
  async function wait(id, seconds = 30) {
    if (typeof seconds !== 'number' || !(seconds >= 0)) throw new TypeError('seconds must be a number >= 0');
    const deadline = Date.now() + seconds * 1000;
    for (;;) {
      const chunk = Math.min(MAX_POLL_SECONDS, Math.max(0, Math.ceil((deadline - Date.now()) / 1000)));
      const started = Date.now();
      const call = await send('GET', `${callPath(id)}?wait=${chunk}`, '', { extraMs: chunk * 1000 + POLL_MARGIN_MS });
      if (call.status !== 'pending' || chunk === 0 || Date.now() >= deadline) return call;
      // Answered early while still pending (the server is stopping): do not spin.
      if (Date.now() - started < 1000) await sleep(Math.min(1000, Math.max(0, deadline - Date.now())));
    }
  }

  /** End a pending call (status `cancelled`); code `not_pending` if it was decided. */
  async function cancel(id) {
    try {
      return await send('POST', `${callPath(id)}/cancel`);
    } catch (e) {
      // A retry of a cancel whose answer was lost finds the call already cancelled.
      if (e instanceof AirlockError && e.code === 'not_pending' && e.afterRetry) {
        const call = await get(id);
        if (call.status === 'cancelled' && call.decided_by === `agent:${agent}`) return call;
      }
      throw e;
    }
  }

  /** Record what happened: { outcome: 'ok' | 'error', summary, duration_ms }. Once per call. */
  async function reportResult(id, { outcome = 'ok', summary, duration_ms } = {}) {
    if (outcome !== 'ok' && outcome !== 'error') throw new TypeError("outcome must be 'ok' or 'error'");
    const body = { outcome };
    if (summary !== undefined && summary !== null) body.summary = String(summary);
    if (duration_ms !== undefined && duration_ms !== null) {
      if (typeof duration_ms !== 'number' || !(duration_ms >= 0)) throw new TypeError('duration_ms must be a number >= 0');
      body.duration_ms = Math.round(duration_ms);
    }
    try {
      return await send('POST', `${callPath(id)}/result`, JSON.stringify(body));
    } catch (e) {
      // A retry of a report whose answer was lost finds it already recorded.
      if (e instanceof AirlockError && e.code === 'result_already_reported' && e.afterRetry) {
        const call = await get(id);
        if (call.result === outcome) return call;
      }
      throw e;
    }
  }

  return Object.freeze({ url: base, agent, propose, get, wait, cancel, reportResult });
}

let fromEnvironment;
function defaultClient() {
  for (const name of ['AIRLOCK_AGENT', 'AIRLOCK_SECRET']) {
    if (!process.env[name]) throw new TypeError(`${name} is not set (the module-level functions read it)`);
  }
  fromEnvironment ??= createClient({
    url: process.env.AIRLOCK_URL || 'http://127.0.0.1:3000',
    agent: process.env.AIRLOCK_AGENT,
    secret: process.env.AIRLOCK_SECRET,
  });
  return fromEnvironment;
}

/** Module-level functions: the client configured from AIRLOCK_URL, AIRLOCK_AGENT, AIRLOCK_SECRET. */
export const propose = (call, options) => defaultClient().propose(call, options);
export const get = (id) => defaultClient().get(id);
export const wait = (id, seconds) => defaultClient().wait(id, seconds);
export const cancel = (id) => defaultClient().cancel(id);
export const reportResult = (id, result) => defaultClient().reportResult(id, result);
