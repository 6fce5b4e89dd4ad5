// The dependency-free ES module client (docs/examples/airlock.mjs) against the running
// server, as the e2e agent; a reviewer releases a held call in the browser while the
// module's `wait` is waiting.
import { expect, test } from '@playwright/test';
import { AirlockError, createClient, isExecutable, propose, reportResult } from '../../docs/examples/airlock.mjs';
import { session } from './agent';
import { hydrated, signIn, USERS } from './helpers';

const BASE = process.env.AIRLOCK_BASE_URL!;
const AGENT = process.env.AIRLOCK_E2E_AGENT || 'e2e-agent';

function client() {
  const secret = process.env.AIRLOCK_E2E_AGENT_SECRET;
  if (!secret) throw new Error('AIRLOCK_E2E_AGENT_SECRET is not set (run scripts/e2e.sh)');
  return createClient({ url: BASE, agent: AGENT, secret });
}

const refund = (sessionId: string) => ({
  session_id: sessionId,
  tool: 'refund_order',
  arguments: { order_id: 'AB12345678', amount: 6000 },
  reason: 'customer reported a damaged item',
});

test('the module gets allowed and denied answers and reports results', async () => {
  const airlock = client();
  const s = session('js');
  const allowed = await airlock.propose({ session_id: s, tool: 'web_search', arguments: { query: 'rust' } });
  expect(allowed.status).toBe('allowed');
  expect(allowed.arguments).toEqual({ query: 'rust' });
  expect(isExecutable(allowed)).toBe(true);
  const reported = await airlock.reportResult(allowed.id, { outcome: 'ok', summary: '3 results', duration_ms: 12 });
  expect(reported.result).toBe('ok');
  await expect(airlock.reportResult(allowed.id, { outcome: 'ok' })).rejects.toMatchObject({
    status: 409, code: 'result_already_reported',
  });

  const denied = await airlock.propose({ session_id: s, tool: 'read_file', arguments: { path: '/etc/shadow' } });
  expect(denied.status).toBe('denied');
  expect(denied.blocked_by).toBe('path_guard');
  expect(denied.arguments).toBeNull();
  expect(isExecutable(denied)).toBe(false);

  // The module-level functions read their client from the environment.
  const saved = { ...process.env };
  Object.assign(process.env, { AIRLOCK_URL: BASE, AIRLOCK_AGENT: AGENT, AIRLOCK_SECRET: process.env.AIRLOCK_E2E_AGENT_SECRET });
  try {
    const unlisted = await propose({ session_id: s, tool: 'cancel_order', arguments: { order_id: 'AB12345678' } });
    expect(unlisted.blocked_by).toBe('allowlist');
    await expect(reportResult(unlisted.id, { outcome: 'ok' })).rejects.toMatchObject({ code: 'not_executable' });
  } finally {
    for (const name of ['AIRLOCK_URL', 'AIRLOCK_AGENT', 'AIRLOCK_SECRET']) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  }

  const stranger = createClient({ url: BASE, agent: AGENT, secret: 'whsec_QUJDREVGR0hJSktMTU5PUA==' });
  const refused = await stranger.get(allowed.id).catch((e) => e);
  expect(refused).toBeInstanceOf(AirlockError);
  expect(refused).toMatchObject({ status: 401, code: 'bad_signature' });
});

test('a held call approved in the browser reaches the module while it waits', async ({ page }) => {
  const airlock = client();
  const held = await airlock.propose(refund(session('js-held')));
  expect(held.status).toBe('pending');
  expect(held.blocked_by).toBe('rule');
  expect(held.expires_at).toMatch(/Z$/);

  const waiting = airlock.wait(held.id, 30);
  await signIn(page, USERS.reviewer);
  await page.goto(`/calls/${held.id}`);
  await hydrated(page);
  await page.getByTestId('approve').click();
  await expect(page.getByTestId('decided-banner')).toContainText(`approved by ${USERS.reviewer}`);

  const released = await waiting;
  expect(released.status).toBe('approved');
  expect(released.arguments).toEqual({ order_id: 'AB12345678', amount: 6000 });
  expect(released.decided_by).toBe(`user:${USERS.reviewer}`);
  expect((await airlock.reportResult(released.id, { outcome: 'ok', summary: 'refund issued' })).result).toBe('ok');
});

test('the module cancels a held call once', async () => {
  const airlock = client();
  const held = await airlock.propose(refund(session('js-cancel')));
  const cancelled = await airlock.cancel(held.id);
  expect(cancelled.status).toBe('cancelled');
  expect(cancelled.decided_by).toBe(`agent:${AGENT}`);
  expect((await airlock.wait(held.id, 5)).status).toBe('cancelled');
  await expect(airlock.cancel(held.id)).rejects.toMatchObject({ status: 409, code: 'not_pending' });
});
