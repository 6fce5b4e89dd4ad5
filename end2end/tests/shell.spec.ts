import { expect, test } from '@playwright/test';
import { hydrated, navLabels, PASSWORD, signIn, USERS } from './helpers';

test('sign in lands on the queue, hydrates, and the live indicator connects', async ({ page }) => {
  const errors: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  await signIn(page, USERS.reviewer);
  await expect(page).toHaveURL(/\/queue$/);
  await hydrated(page);
  await expect(page.getByTestId('live-status')).toHaveText('connected');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Queue');
  await page.screenshot({ path: 'screenshots/queue.png', fullPage: true });
  expect(errors, 'no console errors (CSP, hydration)').toEqual([]);
});

test('wrong password shows an error and stays signed out', async ({ page }) => {
  await page.goto('/login');
  await page.getByLabel('Username').fill(USERS.reviewer);
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('login-error')).toHaveText('Wrong username or password.');
  await expect(page).toHaveURL(/\/login\?error=invalid/);
  await page.screenshot({ path: 'screenshots/login-error.png' });
});

test('navigation follows the role', async ({ browser }) => {
  const expected: Record<string, string[]> = {
    [USERS.admin]: ['Queue', 'Grants', 'On-call', 'Audit', 'Stats', 'Admin'],
    [USERS.reviewer]: ['Queue', 'Grants', 'On-call', 'Stats'],
    [USERS.oncall]: ['Queue', 'Grants', 'On-call', 'Stats'],
    [USERS.auditor]: ['Queue', 'Grants', 'On-call', 'Audit', 'Stats'],
  };
  for (const [user, labels] of Object.entries(expected)) {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await signIn(page, user);
    expect(await navLabels(page)).toEqual(labels);
    await ctx.close();
  }
});

test('client-side navigation works and a forbidden page says so', async ({ page }) => {
  await signIn(page, USERS.auditor);
  await hydrated(page);
  await page.getByRole('link', { name: 'Audit', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Audit');
  await expect(page.getByRole('link', { name: 'Audit', exact: true })).toHaveAttribute('aria-current', 'page');
  const r = await page.goto('/admin');
  expect(r?.status()).toBe(403);
  await expect(page.getByRole('heading', { name: 'Not allowed' })).toBeVisible();
});

test('theme switch is interactive after hydration and remembered', async ({ page }) => {
  await signIn(page, USERS.oncall);
  await hydrated(page);
  const html = page.locator('html');
  const toggle = page.locator('.theme-toggle');
  await expect(toggle).toBeEnabled();
  const before = await html.getAttribute('data-theme');
  await toggle.click();
  const after = before === 'dark' ? 'light' : 'dark';
  await expect(html).toHaveAttribute('data-theme', after);
  await page.reload();
  await hydrated(page);
  await expect(html).toHaveAttribute('data-theme', after);
  await page.screenshot({ path: `screenshots/queue-${after}.png`, fullPage: true });
});

test('admin adds a user through the hydrated form and the new user can sign in', async ({ page, browser }) => {
  await signIn(page, USERS.admin);
  await page.getByRole('link', { name: 'Admin' }).click();
  await hydrated(page);
  const name = `hydr-${Date.now()}`;
  await page.getByLabel('Username', { exact: true }).fill(name);
  await page.getByLabel('Initial password').fill(PASSWORD);
  await page.getByLabel('Role', { exact: true }).selectOption('auditor');
  await page.getByRole('button', { name: 'Add user' }).click();
  await expect(page.getByTestId('admin-notice')).toHaveText(`Added ${name}.`);
  await expect(page.locator(`tr[data-user="${name}"]`)).toBeVisible();
  await page.screenshot({ path: 'screenshots/admin.png', fullPage: true });
  // A server-side refusal is shown without internals.
  await page.getByLabel('Username', { exact: true }).fill(name);
  await page.getByLabel('Initial password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Add user' }).click();
  await expect(page.getByTestId('admin-error')).toContainText('already exists');
  const ctx = await browser.newContext();
  const p2 = await ctx.newPage();
  await signIn(p2, name);
  expect(await navLabels(p2)).toEqual(['Queue', 'Grants', 'On-call', 'Audit', 'Stats']);
  await ctx.close();
});

test('live updates arrive without reload', async ({ page, browser }) => {
  await signIn(page, USERS.admin);
  await page.goto('/queue');
  await hydrated(page);
  await expect(page.getByTestId('live-status')).toHaveText('connected');
  const before = Number(await page.getByTestId('events-received').textContent());
  // Another admin session changes users: the hub publishes an event.
  const ctx = await browser.newContext();
  const p2 = await ctx.newPage();
  await signIn(p2, USERS.admin);
  await p2.goto('/admin');
  await hydrated(p2);
  await p2.getByLabel('Username', { exact: true }).fill(`live-${Date.now()}`);
  await p2.getByLabel('Initial password').fill(PASSWORD);
  await p2.getByRole('button', { name: 'Add user' }).click();
  await expect(p2.getByTestId('admin-notice')).toBeVisible();
  await ctx.close();
  await expect(page.getByTestId('events-received')).toHaveText(String(before + 1));
  await expect(page.getByTestId('last-event')).toContainText('users_changed');
});

test('sign out returns to the sign-in page and protects pages again', async ({ page }) => {
  await signIn(page, USERS.reviewer);
  await hydrated(page);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/login/);
  await page.goto('/queue');
  await expect(page).toHaveURL(/\/login\?next=\/queue/);
  await page.getByLabel('Username').fill(USERS.reviewer);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/queue$/);
});
