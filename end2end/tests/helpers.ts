import { expect, Page } from '@playwright/test';

// Users created by scripts/e2e.sh before the server starts.
export const PASSWORD = process.env.AIRLOCK_E2E_PASSWORD || 'e2e password 0123456789';
export const USERS = { admin: 'e2e-admin', reviewer: 'e2e-reviewer', oncall: 'e2e-oncall', auditor: 'e2e-auditor' };

export async function signIn(page: Page, username: string, password = PASSWORD) {
  await page.goto('/login');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.locator('.who .user')).toHaveText(username);
}

export async function hydrated(page: Page) {
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
}

export function navLabels(page: Page) {
  return page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
}
