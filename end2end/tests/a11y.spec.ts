// Accessibility sweep: every page, as the people who use it, in light and dark themes, in
// English and 简体中文, checked by axe-core (WCAG 2.x A/AA rules). No serious or critical
// violation is allowed. Plus the keyboard flow of the queue and the review page.
import { test, expect, Page, Browser } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { hydrated, PASSWORD, USERS } from './helpers';
import { poll, propose, session } from './agent';

type Theme = 'light' | 'dark';

async function asUser(browser: Browser, user: string, theme: Theme, locale = 'en-US'): Promise<Page> {
  const ctx = await browser.newContext({ colorScheme: theme, locale });
  const page = await ctx.newPage();
  // By the fields' ids: the labels are in the context's language.
  await page.goto('/login');
  await page.locator('#username').fill(user);
  await page.locator('#password').fill(PASSWORD);
  await page.locator('form[action="/login"] button[type="submit"]').click();
  await expect(page.locator('.who .user')).toHaveText(user);
  return page;
}

/** The serious and critical violations axe finds on `path`, one line each. */
async function sweep(page: Page, path: string, theme: Theme): Promise<string[]> {
  await page.goto(path);
  await hydrated(page);
  await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'])
    .analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${path} (${theme}): ${v.id} (${v.impact}): ${v.help}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

let held = '';
let sessionId = '';

test.beforeAll(async () => {
  sessionId = session('a11y');
  const r = await propose({ session_id: sessionId, trace_id: `trace-${sessionId}`, tool: 'write_file',
    arguments: { path: 'out/a11y.md', content: '# Notes' }, context: { trust: 'isolated' } });
  expect(r.status).toBe('pending');
  held = r.id;
  await propose({ session_id: sessionId, tool: 'read_file', arguments: { path: '/etc/shadow' } });
});

for (const theme of ['light', 'dark'] as Theme[]) {
  test(`signed-out pages have no serious accessibility violations (${theme})`, async ({ browser }) => {
    for (const locale of ['en-US', 'zh-CN']) {
      const ctx = await browser.newContext({ colorScheme: theme, locale });
      const page = await ctx.newPage();
      const bad = [...await sweep(page, '/login', theme), ...await sweep(page, '/no-such-page', theme)];
      expect(bad, locale).toEqual([]);
      await ctx.close();
    }
  });

  test(`admin's and auditor's pages have no serious accessibility violations (${theme})`, async ({ browser }) => {
    test.setTimeout(240_000);
    const bad: string[] = [];
    const admin = await asUser(browser, USERS.admin, theme);
    for (const path of ['/queue', `/calls/${held}`, '/grants', '/oncall', '/stats', '/admin', '/admin/policy', '/admin/policy/replay', '/audit']) {
      bad.push(...await sweep(admin, path, theme));
    }
    const auditor = await asUser(browser, USERS.auditor, theme, 'zh-CN');
    for (const path of ['/audit', `/audit/sessions/${sessionId}`, `/audit/traces/trace-${sessionId}`, '/queue', `/calls/${held}`]) {
      bad.push(...await sweep(auditor, path, theme));
    }
    expect(bad).toEqual([]);
  });

  test(`reviewer's and on-call's pages have no serious accessibility violations (${theme})`, async ({ browser }) => {
    test.setTimeout(240_000);
    const bad: string[] = [];
    const reviewer = await asUser(browser, USERS.reviewer, theme);
    for (const path of ['/queue', `/calls/${held}`, '/grants', '/stats', '/confirm?t=not-a-link']) {
      bad.push(...await sweep(reviewer, path, theme));
    }
    const oncall = await asUser(browser, USERS.oncall, theme, 'zh-CN');
    for (const path of ['/oncall', '/queue', `/calls/${held}`]) {
      bad.push(...await sweep(oncall, path, theme));
    }
    expect(bad).toEqual([]);
  });
}

test('the queue and a review work from the keyboard alone', async ({ browser }) => {
  const page = await asUser(browser, USERS.reviewer, 'light');
  const s = session('keys');
  const r = await propose({ session_id: s, tool: 'write_file', arguments: { path: 'out/keys.md', content: 'k' },
    context: { trust: 'isolated' } });
  await page.goto(`/queue?session=${s}`);
  await hydrated(page);
  // The skip link is the first stop and lands on the content.
  await page.keyboard.press('Tab');
  await expect(page.getByRole('link', { name: 'Skip to content' })).toBeFocused();
  await page.keyboard.press('Enter');
  // Tab through the page until the held call's link has focus, then open it with Enter.
  const link = page.locator(`a[href="/calls/${r.id}"]`).first();
  await expect(link).toBeVisible();
  let reached = false;
  for (let i = 0; i < 80 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await link.evaluate((el) => el === document.activeElement);
  }
  expect(reached, 'the held call is reachable with Tab').toBe(true);
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(new RegExp(`/calls/${r.id}$`));
  await hydrated(page);
  // On the review page, Tab reaches the Approve button; Enter approves.
  const approve = page.getByTestId('approve');
  reached = false;
  for (let i = 0; i < 80 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await approve.evaluate((el) => el === document.activeElement);
  }
  expect(reached, 'Approve is reachable with Tab').toBe(true);
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('decision-message')).toBeVisible();
  expect((await poll(r.id, 5)).status).toBe('approved');
});

test('the sweep reports what it is meant to catch', async ({ browser }) => {
  const ctx = await browser.newContext({ colorScheme: 'light' });
  const page = await ctx.newPage();
  await page.goto('/login');
  await hydrated(page);
  // A button with no name and an unlabelled field: both serious or critical for axe.
  await page.evaluate(() => {
    const main = document.querySelector('main')!;
    main.insertAdjacentHTML('beforeend', '<button type="button"></button><input type="text">');
  });
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa']).analyze();
  const ids = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
  expect(ids).toEqual(expect.arrayContaining(['button-name', 'label']));
  await ctx.close();
});
