// English and 简体中文: the browser's language is the default, the switch in the header
// changes it and the choice is remembered with the account. Screenshots of the queue and
// a review in each language.
import { test, expect, Page } from '@playwright/test';
import { hydrated, PASSWORD } from './helpers';
import { propose, session } from './agent';

const LINGUIST = 'e2e-linguist';

async function signInAs(page: Page, user: string, labels: { user: string; pass: string; button: string }) {
  await page.goto('/login');
  await page.getByLabel(labels.user).fill(user);
  await page.getByLabel(labels.pass).fill(PASSWORD);
  await page.getByRole('button', { name: labels.button }).click();
  await expect(page.locator('.who .user')).toHaveText(user);
}

const EN = { user: 'Username', pass: 'Password', button: 'Sign in' };
const ZH = { user: '用户名', pass: '密码', button: '登录' };

async function heldCall(s: string): Promise<string> {
  const r = await propose({ session_id: s, tool: 'write_file',
    arguments: { path: 'out/翻译.md', content: '# 报告' }, context: { trust: 'isolated' } });
  expect(r.status).toBe('pending');
  return r.id;
}

test('a Chinese browser gets the Chinese dashboard; queue and review in both languages', async ({ browser }) => {
  const s = session('i18n');
  const id = await heldCall(s);
  for (const [locale, labels, lang, queueNav] of [
    ['zh-CN', ZH, 'zh-CN', '待审队列'],
    ['en-US', EN, 'en', 'Queue'],
  ] as const) {
    const ctx = await browser.newContext({ locale });
    const page = await ctx.newPage();
    await page.goto('/login');
    await expect(page.locator('html')).toHaveAttribute('lang', lang);
    await signInAs(page, 'e2e-reviewer', labels);
    // The session's calls only: other specs leave held calls in the queue.
    await page.goto(`/queue?session=${s}`);
    await hydrated(page);
    await expect(page.locator('html')).toHaveAttribute('lang', lang);
    await expect(page.getByRole('navigation').getByRole('link', { name: queueNav })).toBeVisible();
    await expect(page.locator(`a[href="/calls/${id}"]`).first()).toBeVisible();
    await page.screenshot({ path: `screenshots/queue-${lang}.png`, fullPage: true });
    await page.goto(`/calls/${id}`);
    await hydrated(page);
    await expect(page.getByTestId('approve')).toBeVisible();
    await page.screenshot({ path: `screenshots/review-${lang}.png`, fullPage: true });
    await ctx.close();
  }
});

test('the language switch changes the dashboard and is remembered with the account', async ({ browser }) => {
  const ctx = await browser.newContext({ locale: 'en-US' });
  const page = await ctx.newPage();
  await signInAs(page, LINGUIST, EN);
  await page.goto('/queue');
  await hydrated(page);
  await page.getByRole('button', { name: '简体中文' }).click();
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await expect(page.getByRole('button', { name: '退出登录' })).toBeVisible();
  await ctx.close();

  // Another browser, still asking for English: the account's choice wins.
  const other = await browser.newContext({ locale: 'en-US' });
  const again = await other.newPage();
  await signInAs(again, LINGUIST, EN);
  await again.goto('/queue');
  await expect(again.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await hydrated(again);
  await again.getByRole('button', { name: 'English' }).click();
  await expect(again.locator('html')).toHaveAttribute('lang', 'en');
  await expect(again.getByRole('button', { name: 'Sign out' })).toBeVisible();
  await other.close();
});
