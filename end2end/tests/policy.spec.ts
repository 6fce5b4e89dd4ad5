// The policy page: an admin checks a broken text (problems at their lines), applies a
// change and the very next call is decided under it, replays the recorded calls under a
// proposal, and rolls back. The server's policy file is its own copy (scripts/e2e.sh).
import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { propose, session } from './agent';
import { hydrated, signIn, USERS } from './helpers';

const DEMO = readFileSync(join(__dirname, '..', '..', 'policies', 'demo.toml'), 'utf8');
const ASK = 'risk = "medium"\ndestructive = true\napproval = "ask"\ngrantable = true';
// The demo policy with write_file allowed without a person.
const RELAXED = DEMO.replace(ASK, ASK.replace('"ask"', '"auto"'));
const write = (s: string, path: string) =>
  ({ session_id: s, tool: 'write_file', arguments: { path, content: '# Policy' }, context: { trust: 'isolated' } });

test('an admin applies a policy change from the page and the next call is decided under it', async ({ page }) => {
  expect(RELAXED).not.toBe(DEMO);
  const s = session('policy');
  const before = await propose(write(s, 'out/before.md'));
  expect(before.status).toBe('pending');

  await signIn(page, USERS.admin);
  await page.goto('/admin');
  await page.getByTestId('policy-link').click();
  await expect(page).toHaveURL(/\/admin\/policy$/);
  await hydrated(page);
  await expect(page.getByTestId('policy-version')).toHaveText(before.policy_version);
  const source = page.getByLabel('Policy (TOML)');
  await expect(source).toHaveValue(DEMO);

  // A broken text: the problem at its line, and nothing changes.
  await source.fill('[policy]\nname = "demo"\n\n[tools.read_file]\napproval = "sometimes"\n');
  await page.getByRole('button', { name: 'Check' }).click();
  await expect(page.getByTestId('policy-problem').first()).toContainText('line 5');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page.getByTestId('policy-result')).toContainText('nothing changed');
  await page.screenshot({ path: 'screenshots/policy-refused.png', fullPage: true });
  expect((await propose(write(s, 'out/still.md'))).status).toBe('pending');

  // The change, with why.
  await source.fill(RELAXED);
  await page.getByLabel('Why (kept with the change)').fill('writes in the workspace need no person');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page.getByTestId('policy-message')).toContainText('is in force');
  await hydrated(page);
  const v2 = (await page.getByTestId('policy-version').textContent())!.trim();
  expect(v2).not.toBe(before.policy_version);
  const after = await propose(write(s, 'out/after.md'));
  expect(after.status).toBe('allowed');
  expect(after.policy_version).toBe(v2);

  const latest = page.getByTestId('policy-change').first();
  await expect(latest).toContainText('via page');
  await expect(latest).toContainText('writes in the workspace need no person');
  await latest.locator('summary').click();
  await expect(latest.locator('.diff')).toContainText('approval = "auto"');
  // Only the change and its context: the rest of the file is folded.
  await expect(latest.locator('.diff .d-gap').first()).toContainText('unchanged lines');
  await expect(latest.locator('.diff')).not.toContainText('[tools.send_email]');
  await page.screenshot({ path: 'screenshots/policy-history.png', fullPage: true });

  // What the demo policy would have done to the calls since: the writes would be held.
  await source.fill(DEMO);
  await page.getByRole('button', { name: 'What would it have changed?' }).click();
  await expect(page).toHaveURL(/\/admin\/policy\/replay\?v=/);
  await expect(page.getByTestId('replay-summary')).toContainText('would be decided otherwise');
  await expect(page.getByTestId('replay-shift').filter({ hasText: 'allowed' }).first()).toContainText('pending');
  await expect(page.getByTestId('replay-example').filter({ hasText: 'write_file' }).first()).toBeVisible();
  await page.screenshot({ path: 'screenshots/policy-replay.png', fullPage: true });

  // Roll back to the version before: writes are held again.
  await page.goto('/admin/policy');
  await hydrated(page);
  await page.locator(`[data-testid="policy-change"][data-version="${before.policy_version}"]`).first()
    .getByRole('button', { name: 'Roll back to this version' }).click();
  await expect(page.getByTestId('policy-message')).toContainText('is in force');
  await expect(page.getByTestId('policy-version')).toHaveText(before.policy_version);
  expect((await propose(write(s, 'out/back.md'))).status).toBe('pending');
});

test('only admins open the policy page', async ({ page }) => {
  await signIn(page, USERS.reviewer);
  const r = await page.goto('/admin/policy');
  expect(r!.status()).toBe(403);
});
