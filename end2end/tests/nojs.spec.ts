import { expect, test } from '@playwright/test';
import { propose, session } from './agent';
import { navLabels, PASSWORD, signIn, USERS } from './helpers';

// The same flows with JavaScript off: pages are complete server-rendered HTML and every
// form posts on its own.

test('sign in, navigate and sign out without JavaScript', async ({ page }) => {
  await signIn(page, USERS.admin);
  await expect(page).toHaveURL(/\/queue$/);
  expect(await navLabels(page)).toEqual(['Queue', 'Grants', 'On-call', 'Audit', 'Stats', 'Admin']);
  await page.getByRole('link', { name: 'Stats' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Stats');
  await expect(page.getByTestId('live-status')).toHaveText('offline');
  await page.screenshot({ path: 'screenshots/nojs-stats.png', fullPage: true });
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/login\?error=signed_out/);
});

test('admin adds a user without JavaScript', async ({ page }) => {
  await signIn(page, USERS.admin);
  await page.goto('/admin');
  const name = `nojs-${Date.now()}`;
  await page.getByLabel('Username', { exact: true }).fill(name);
  await page.getByLabel('Initial password').fill(PASSWORD);
  await page.getByLabel('Role', { exact: true }).selectOption('oncall');
  await page.getByRole('button', { name: 'Add user' }).click();
  await expect(page).toHaveURL(/\/admin/);
  await expect(page.locator(`tr[data-user="${name}"]`)).toBeVisible();
});

test('wrong password without JavaScript', async ({ page }) => {
  await page.goto('/login');
  await page.getByLabel('Username').fill(USERS.admin);
  await page.getByLabel('Password').fill('wrong');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('login-error')).toBeVisible();
});

test('queue filters, order and pages work without JavaScript (a plain GET form)', async ({ page }) => {
  const s = session('nojs-filter');
  for (const amount of [7500, 8000]) {
    const r = await propose({ session_id: s, tool: 'refund_order', arguments: { order_id: 'AB12345678', amount } });
    expect(r.status).toBe('pending');
  }
  await signIn(page, USERS.reviewer);
  await page.getByLabel('Session', { exact: true }).fill(s);
  await page.getByLabel('Sort', { exact: true }).selectOption('risk');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page).toHaveURL(new RegExp(`session=${s}`));
  await expect(page).toHaveURL(/sort=risk/);
  await expect(page.getByTestId('queue-count')).toContainText('2 match the filters.');
  await expect(page.getByTestId('queue-row')).toHaveCount(2);
  await page.screenshot({ path: 'screenshots/nojs-queue-filtered.png', fullPage: true });
  await page.getByRole('link', { name: 'Clear' }).click();
  await expect(page).toHaveURL(/\/queue$/);
});
