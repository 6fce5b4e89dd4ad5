// Agents managed on the admin page: add (the secret shown once, copied with a button),
// rotate with a grace period, disable and enable. The secret the page showed signs real
// requests to the agent API.
import { test, expect } from '@playwright/test';
import { createHmac, randomUUID } from 'node:crypto';
import { signIn, hydrated, USERS } from './helpers';

const BASE = process.env.AIRLOCK_BASE_URL!;

async function proposeAs(agent: string, secret: string): Promise<{ status: number; body: any }> {
  const body = JSON.stringify({ session_id: `agents-${randomUUID().slice(0, 8)}`, tool: 'web_search', arguments: { query: 'rust' } });
  const msgId = `msg_${randomUUID()}`;
  const ts = String(Math.floor(Date.now() / 1000));
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const sig = 'v1,' + createHmac('sha256', key).update(`${msgId}.${ts}.${body}`).digest('base64');
  const r = await fetch(`${BASE}/api/v1/tool-calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'airlock-agent': agent, 'webhook-id': msgId,
      'webhook-timestamp': ts, 'webhook-signature': sig },
    body,
  });
  return { status: r.status, body: await r.json() };
}

test('admin adds an agent, copies its secret once, rotates it with grace, disables and enables it', async ({ browser }) => {
  test.setTimeout(60_000);
  const ctx = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await ctx.newPage();
  await signIn(page, USERS.admin);
  await page.goto('/admin');
  await hydrated(page);
  const id = `pw-bot-${randomUUID().slice(0, 6)}`;

  const form = page.getByTestId('add-agent-form');
  await form.getByLabel('Agent id').fill(id);
  await form.getByLabel('Description').fill('Playwright agent');
  await form.getByRole('button', { name: 'Add agent' }).click();
  const box = page.getByTestId('issued-secret');
  await expect(box).toContainText(`Agent ${id} added.`);
  await expect(box).toContainText('shown only now');
  const secret = await box.getByLabel('Signing secret').inputValue();
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
  await box.getByRole('button', { name: 'Copy' }).click();
  await expect(box.getByRole('button', { name: 'Copied' })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
  await page.screenshot({ path: 'screenshots/admin-agent-secret.png', fullPage: true });
  expect((await proposeAs(id, secret)).status).toBe(200);

  // Done: the page reloads and the secret is nowhere in it any more.
  await box.getByRole('button', { name: 'Done' }).click();
  const row = page.locator(`tr[data-agent="${id}"]`);
  await expect(row.getByTestId('agent-status')).toHaveText('active');
  await expect(row.getByTestId('agent-secrets')).toContainText('current since');
  expect(await page.content()).not.toContain(secret.slice(6));

  // Rotate with an hour's grace: a new secret, and the old one still works meanwhile.
  await row.getByLabel(`Grace period for the earlier secret of ${id}`).selectOption('3600');
  await row.getByRole('button', { name: 'Rotate secret' }).click();
  const rotated = page.getByTestId('issued-secret');
  await expect(rotated).toContainText('keeps working for 1 hour');
  const second = await rotated.getByLabel('Signing secret').inputValue();
  expect(second).not.toBe(secret);
  await rotated.getByRole('button', { name: 'Done' }).click();
  await expect(row.getByTestId('agent-secrets')).toContainText('earlier one valid until');
  expect((await proposeAs(id, second)).status).toBe(200);
  expect((await proposeAs(id, secret)).status).toBe(200);

  // Disabled: its requests are refused at once; enabled again: accepted.
  await row.getByRole('button', { name: `Disable ${id}` }).click();
  await expect(page.getByTestId('agent-notice')).toContainText('disabled');
  await expect(row.getByTestId('agent-status')).toHaveText('disabled');
  const refused = await proposeAs(id, second);
  expect(refused.status).toBe(401);
  expect(refused.body.error.code).toBe('agent_disabled');
  await page.screenshot({ path: 'screenshots/admin-agents.png', fullPage: true });
  await row.getByRole('button', { name: `Enable ${id}` }).click();
  await expect(row.getByTestId('agent-status')).toHaveText('active');
  expect((await proposeAs(id, second)).status).toBe(200);

  // A taken id is refused next to the form, and no secret is shown.
  await form.getByLabel('Agent id').fill(id);
  await form.getByRole('button', { name: 'Add agent' }).click();
  await expect(page.getByTestId('secret-error')).toContainText('already exists');
  await expect(page.getByTestId('issued-secret')).toHaveCount(0);
  await ctx.close();
});

test('the audit trail records who changed which agent', async ({ browser }) => {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await signIn(page, USERS.auditor);
  await page.goto('/audit?kind=agent_secret_rotated');
  await expect(page.getByText('agent_secret_rotated').first()).toBeVisible();
  await expect(page.getByText(USERS.admin).first()).toBeVisible();
  await ctx.close();
});
