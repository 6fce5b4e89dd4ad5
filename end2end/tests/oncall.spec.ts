import { Browser, expect, Page, test } from '@playwright/test';
import { poll, propose, session } from './agent';
import { hydrated, PASSWORD, signIn, USERS } from './helpers';

async function pageFor(browser: Browser, user: string, path: string, viewport?: { width: number; height: number }): Promise<Page> {
  const ctx = await browser.newContext(viewport ? { viewport } : {});
  const page = await ctx.newPage();
  await signIn(page, user);
  await page.goto(path);
  await hydrated(page);
  await expect(page.getByTestId('live-status')).toHaveText('connected');
  return page;
}

const WHY = 'Payments are down and no reviewer answers the pager';

test('break-glass: the banner appears live in another browser, an override reaches the waiting agent, someone else reviews it', async ({ browser }) => {
  const auditor = await pageFor(browser, USERS.auditor, '/queue');
  const phone = await pageFor(browser, USERS.reviewer, '/queue', { width: 375, height: 740 });
  const oncall = await pageFor(browser, USERS.oncall, '/oncall');
  await expect(auditor.getByTestId('break-glass-banner')).toHaveCount(0);

  const call = await propose({ session_id: session('bg'), tool: 'write_file', arguments: { path: 'out/bg.md', content: '# Fix' } });
  expect(call.status).toBe('pending');
  const waiting = poll(call.id, 25);

  // A wrong password starts nothing.
  await oncall.getByLabel('Justification').fill(WHY);
  await oncall.getByLabel('Minutes').fill('15');
  await oncall.getByLabel('Your password').fill('not my password');
  await oncall.getByRole('button', { name: 'Start break-glass' }).click();
  await expect(oncall.getByTestId('break-glass-message')).toContainText('password is not right');
  await expect(auditor.getByTestId('break-glass-banner')).toHaveCount(0);

  await oncall.getByLabel('Your password').fill(PASSWORD);
  await oncall.getByRole('button', { name: 'Start break-glass' }).click();
  await expect(oncall.getByTestId('break-glass-message')).toContainText('Break-glass is on');
  await expect(oncall.getByLabel('Your password')).toHaveValue('');
  // Everyone else sees it at once, without reloading: who, why, until when, time left.
  const banner = auditor.getByTestId('break-glass-banner');
  await expect(banner).toContainText(USERS.oncall);
  await expect(banner).toContainText(WHY);
  await expect(banner).toContainText('UTC');
  await expect(auditor.getByTestId('break-glass-left')).toContainText('left');
  await expect(phone.getByTestId('break-glass-banner')).toContainText(WHY);
  await auditor.screenshot({ path: 'screenshots/break-glass-banner.png' });
  await phone.screenshot({ path: 'screenshots/break-glass-banner-phone.png' });

  // The on-call person releases the held call; the agent's long-poll gets it.
  await oncall.goto(`/calls/${call.id}`);
  await hydrated(oncall);
  await oncall.getByRole('button', { name: 'Release under break-glass' }).click();
  await expect(oncall.getByTestId('override-message')).toContainText('Released under break-glass');
  const done = await waiting;
  expect(done.status).toBe('overridden');
  expect(done.source).toBe('override');
  expect(done.decided_by).toBe(`user:${USERS.oncall}`);
  expect(done.comment).toBe(WHY);

  // It waits for someone else's review, counted on the queue.
  await phone.goto('/queue');
  await hydrated(phone);
  await expect(phone.getByTestId('overrides-awaiting-count')).toContainText('await');
  await oncall.goto('/oncall');
  await hydrated(oncall);
  const own = oncall.locator(`[data-testid="override-item"][data-call="${call.id}"]`);
  await expect(own).toContainText('Your own override');
  await expect(own.getByRole('button', { name: 'Agree' })).toHaveCount(0);
  await phone.goto('/oncall');
  await hydrated(phone);
  const item = phone.locator(`[data-testid="override-item"][data-call="${call.id}"]`);
  await expect(item).toContainText(WHY);
  await phone.screenshot({ path: 'screenshots/oncall-phone.png', fullPage: true });
  await item.getByRole('button', { name: 'Agree' }).click();
  await expect(phone.getByTestId('ack-message')).toHaveText('Review recorded.');
  await expect(phone.locator(`[data-testid="overrides-reviewed"] [data-call="${call.id}"]`)).toContainText('Agreed by');

  // Ended early by its owner: the banner goes away everywhere.
  await oncall.getByTestId('end-break-glass').click();
  await expect(banner).toHaveCount(0);
  await expect(phone.getByTestId('break-glass-banner')).toHaveCount(0);
  await oncall.screenshot({ path: 'screenshots/oncall.png', fullPage: true });
});

test('a tool the policy keeps closed to break-glass says so on the review page', async ({ browser }) => {
  const call = await propose({ session_id: session('bgr'), tool: 'refund_order', arguments: { order_id: 'AB12345678', amount: 9000 } });
  expect(call.status).toBe('pending');
  const oncall = await pageFor(browser, USERS.oncall, `/calls/${call.id}`);
  await expect(oncall.getByTestId('break-glass-box')).toContainText('break_glass = false');
  await expect(oncall.getByRole('button', { name: 'Release under break-glass' })).toHaveCount(0);
});

test('a page someone is typing into asks before it reloads for a change made elsewhere', async ({ browser }) => {
  // The same on-call person in two browsers: one is typing, the other starts break-glass.
  const typing = await pageFor(browser, USERS.oncall, '/oncall');
  const other = await pageFor(browser, USERS.oncall, '/oncall');
  await typing.getByLabel('Justification').fill('half-written thoughts that must not be lost');

  await other.getByLabel('Justification').fill(WHY);
  await other.getByLabel('Minutes').fill('5');
  await other.getByLabel('Your password').fill(PASSWORD);
  await other.getByRole('button', { name: 'Start break-glass' }).click();
  await expect(other.getByTestId('break-glass-message')).toContainText('Break-glass is on');
  await expect(other.getByTestId('my-break-glass')).toContainText(WHY);

  // The typing page learns of it live, but keeps what was typed and offers a reload.
  await expect(typing.getByTestId('break-glass-banner')).toContainText(WHY);
  await expect(typing.getByTestId('page-changed')).toBeVisible();
  await expect(typing.getByLabel('Justification')).toHaveValue('half-written thoughts that must not be lost');
  await typing.getByTestId('page-changed').getByRole('button', { name: 'Reload' }).click();
  await expect(typing.getByTestId('my-break-glass')).toContainText(WHY);
  await expect(typing.getByTestId('page-changed')).toHaveCount(0);

  // A page nobody typed into follows by itself: ending it reloads the other page.
  await typing.getByTestId('end-break-glass').click();
  await expect(other.getByTestId('my-break-glass')).toHaveCount(0);
  await expect(other.getByTestId('break-glass-banner')).toHaveCount(0);
});
