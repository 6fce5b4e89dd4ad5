import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { propose, session } from './agent';
import { hydrated, signIn, USERS } from './helpers';

async function auditorPage(browser: any, path = '/audit') {
  const ctx = await browser.newContext({ acceptDownloads: true });
  const page = await ctx.newPage();
  await signIn(page, USERS.auditor);
  await page.goto(path);
  await hydrated(page);
  return page;
}

test('an auditor searches the trail and opens the session timeline', async ({ browser }) => {
  const s = session('audit-search');
  const word = `ledgerword${Date.now()}`;
  const read = await propose({ session_id: s, tool: 'read_file', arguments: { path: `notes/${word}.md` }, reason: `look up the ${word} figures` });
  expect(read.status).toBe('allowed');
  const held = await propose({ session_id: s, tool: 'write_file', arguments: { path: 'out/audit.md', content: '# Audit' }, plan: 'write the audit summary', context: { trust: 'isolated' } });
  expect(held.status).toBe('pending');

  const page = await auditorPage(browser);
  await page.getByRole('searchbox', { name: 'Search the audit trail' }).fill(word);
  await page.getByRole('button', { name: 'Search' }).click();
  // The search lives in the URL: shareable, and the back button returns to it.
  await expect(page).toHaveURL(new RegExp(`[?&]q=${word}`));
  const rows = page.getByTestId('audit-row');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText('read_file');
  await expect(rows.first()).toContainText('allowed');
  await page.screenshot({ path: 'screenshots/audit-search.png', fullPage: true });

  await rows.first().getByTestId('trace-link').click();
  await expect(page).toHaveURL(new RegExp(`/audit/sessions/${s}$`));
  await expect(page.getByTestId('trace-title')).toHaveText(`Session ${s}`);
  const calls = page.getByTestId('trace-call');
  await expect(calls).toHaveCount(2);
  await expect(calls.first()).toContainText(`look up the ${word} figures`);
  await expect(calls.nth(1)).toContainText('write the audit summary');
  await expect(calls.nth(1).getByTestId('trace-waited')).toContainText('waiting for');
  await page.screenshot({ path: 'screenshots/audit-trace.png', fullPage: true });

  await page.goBack();
  await expect(page).toHaveURL(new RegExp(`[?&]q=${word}`));
  await expect(page.getByTestId('audit-row')).toHaveCount(1);

  // Filters fold into the same URL.
  await page.goto(`/audit?session=${s}&tool=write_file`);
  await expect(page.getByTestId('audit-row')).toHaveCount(1);
  await expect(page.getByTestId('audit-row').first()).toContainText('pending');
});

test('an open timeline follows the session live', async ({ browser }) => {
  const s = session('audit-live');
  const first = await propose({ session_id: s, tool: 'read_file', arguments: { path: 'notes/one.md' } });
  expect(first.status).toBe('allowed');
  const page = await auditorPage(browser, `/audit/sessions/${s}`);
  await expect(page.getByTestId('trace-call')).toHaveCount(1);
  await expect(page.getByTestId('trace-live')).toBeVisible();

  const held = await propose({ session_id: s, tool: 'write_file', arguments: { path: 'out/live.md', content: 'x' }, context: { trust: 'isolated' } });
  expect(held.status).toBe('pending');
  await expect(page.getByTestId('trace-call')).toHaveCount(2, { timeout: 10_000 });
  await expect(page.getByTestId('trace-call').nth(1).getByTestId('trace-status')).toHaveText('pending');
  await page.screenshot({ path: 'screenshots/audit-trace-live.png', fullPage: true });
});

test('an auditor downloads a search as CSV and verifies the chain', async ({ browser }) => {
  const s = session('audit-export');
  await propose({ session_id: s, tool: 'read_file', arguments: { path: 'notes/export.md' } });
  const page = await auditorPage(browser, `/audit?session=${s}`);
  await expect(page.getByTestId('audit-row')).toHaveCount(1);

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
  expect(download.suggestedFilename()).toMatch(/^airlock-audit-.*\.csv$/);
  const csv = readFileSync((await download.path())!, 'utf8');
  const lines = csv.trim().split('\n');
  expect(lines[0]).toContain('seq,at,at_ms,kind,actor');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toContain(s);

  await page.getByTestId('verify-chain').click();
  await expect(page.getByTestId('verify-result')).toContainText('Verified up to event');
  await page.screenshot({ path: 'screenshots/audit-verified.png', fullPage: true });
});

test('on a phone the search and the timeline fit the screen', async ({ browser }) => {
  const s = session('audit-phone');
  await propose({ session_id: s, tool: 'read_file', arguments: { path: 'notes/phone.md' }, reason: 'read the phone notes' });
  const ctx = await browser.newContext({ viewport: { width: 375, height: 740 }, hasTouch: true, isMobile: true });
  const page = await ctx.newPage();
  await signIn(page, USERS.auditor);
  const noSidewaysScroll = async () => {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  };
  await page.goto(`/audit?session=${s}`);
  await hydrated(page);
  await expect(page.getByTestId('audit-row')).toHaveCount(1);
  await noSidewaysScroll();
  await page.screenshot({ path: 'screenshots/phone-audit.png', fullPage: true });
  await page.goto(`/audit/sessions/${s}`);
  await expect(page.getByTestId('trace-call')).toHaveCount(1);
  await expect(page.getByTestId('trace-call').first()).toContainText('read the phone notes');
  await noSidewaysScroll();
  await page.screenshot({ path: 'screenshots/phone-trace.png', fullPage: true });
});

test('an auditor finds where a leaked secret was sent without the value being shown', async ({ browser }) => {
  const s = session('audit-leak');
  const token = `ghp_${'Zq8' + Date.now().toString(36).padEnd(33, 'x')}`;
  const held = await propose({ session_id: s, tool: 'write_file', arguments: { path: 'out/leak.md', content: `token ${token}` }, context: { trust: 'isolated' } });
  expect(held.status).toBe('pending');
  const page = await auditorPage(browser);
  await page.getByText('Was a secret ever sent? Look it up').click();
  await page.getByLabel('Secret value').fill(token);
  await page.getByRole('button', { name: 'Look up' }).click();
  await expect(page).toHaveURL(/[?&]q=sfp[0-9a-f]{16}/);
  const rows = page.getByTestId('audit-row');
  await expect(rows.filter({ hasText: s })).toHaveCount(1);
  expect(await page.content()).not.toContain(token);
  await page.screenshot({ path: 'screenshots/audit-secret-lookup.png', fullPage: true });
});
