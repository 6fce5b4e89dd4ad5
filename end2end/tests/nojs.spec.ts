import { expect, test } from '@playwright/test';
import { navLabels, PASSWORD, signIn, USERS } from './helpers';

// The same flows with JavaScript off: pages are complete server-rendered HTML and every
// form posts on its own.

test('sign in, navigate and sign out without JavaScript', async ({ page }) => {
  await signIn(page, USERS.admin);
  await expect(page).toHaveURL(/\/queue$/);
  expect(await navLabels(page)).toEqual(['Queue', 'Grants', 'Audit', 'Stats', 'Admin']);
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
