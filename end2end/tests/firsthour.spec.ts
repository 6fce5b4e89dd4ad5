import { Browser, CDPSession, expect, Page, test } from '@playwright/test';
import { poll, propose, session } from './agent';
import { hydrated, signIn, USERS } from './helpers';

const PHONE = { width: 375, height: 740 };

async function heldWrite(sessionId: string, path: string): Promise<string> {
  const r = await propose({ session_id: sessionId, tool: 'write_file', arguments: { path, content: '# Phone' }, context: { trust: 'isolated' } });
  expect(r.status).toBe('pending');
  return r.id;
}

async function phone(browser: Browser, user: string): Promise<Page> {
  const ctx = await browser.newContext({ viewport: PHONE, hasTouch: true, isMobile: true });
  const page = await ctx.newPage();
  await signIn(page, user);
  await hydrated(page);
  return page;
}

async function noSidewaysScroll(page: Page) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
}

/** The element lies wholly inside the first screen (no scrolling needed). */
async function onFirstScreen(page: Page, selector: ReturnType<Page['locator']>) {
  const box = await selector.boundingBox();
  expect(box, 'element is rendered').not.toBeNull();
  expect(box!.y).toBeGreaterThanOrEqual(0);
  expect(box!.y + box!.height).toBeLessThanOrEqual(PHONE.height);
}

test('on a phone the oldest held call and the decision buttons are on the first screen', async ({ browser }) => {
  const id = await heldWrite(session('phone'), 'out/phone.md');
  const page = await phone(browser, USERS.oncall);
  await expect(page).toHaveURL(/\/queue$/);

  // Compact header: navigation folded behind one Menu button.
  const menu = page.getByTestId('menu');
  await expect(menu.locator('summary')).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeHidden();
  // Filters folded behind one button.
  const filters = page.getByTestId('filters');
  await expect(filters.locator('summary')).toBeVisible();
  await expect(page.locator('#f-tool')).toBeHidden();

  // The oldest held call (first row, oldest first) is on the first screen.
  const first = page.getByTestId('queue-row').first();
  await expect(first).toBeVisible();
  await onFirstScreen(page, first);
  await noSidewaysScroll(page);
  await page.screenshot({ path: 'screenshots/phone-queue.png' });

  // The menu opens and leads to the other pages.
  await menu.locator('summary').click();
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Grants' })).toBeVisible();
  await page.screenshot({ path: 'screenshots/phone-menu.png' });
  await menu.locator('summary').click();

  // Filters unfold; choosing a session narrows the list (and the URL says so).
  await filters.locator('summary').click();
  await expect(page.locator('#f-tool')).toBeVisible();
  await page.screenshot({ path: 'screenshots/phone-filters.png' });

  // The review page: the decision buttons sit under the thumb without scrolling.
  const decision = poll(id, 30);
  await page.goto(`/calls/${id}`);
  await hydrated(page);
  const approve = page.getByTestId('approve');
  await expect(approve).toBeVisible();
  await onFirstScreen(page, approve);
  await noSidewaysScroll(page);
  await page.screenshot({ path: 'screenshots/phone-review.png' });
  await approve.tap();
  await expect(page.getByTestId('decided-banner')).toContainText(`approved by ${USERS.oncall}`);
  expect((await decision).status).toBe('approved');
});

test('the queue pages through held calls, shows the true count and keeps filters in the URL', async ({ browser }) => {
  const s = session('paging');
  const ids: string[] = [];
  for (let i = 0; i < 53; i++) ids.push(await heldWrite(s, `out/page-${i}.md`));
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await signIn(page, USERS.reviewer);
  await page.goto(`/queue?session=${s}`);
  await hydrated(page);
  await expect(page.getByTestId('queue-count')).toContainText('53 match the filters.');
  await expect(page.getByTestId('queue-row')).toHaveCount(50);
  await expect(page.getByTestId('pager')).toContainText('Page 1 of 2');
  await page.getByRole('link', { name: 'Next ›' }).click();
  await expect(page).toHaveURL(new RegExp(`session=${s}.*page=1`));
  await expect(page.getByTestId('queue-row')).toHaveCount(3);
  await expect(page.getByTestId('queue-row').last()).toHaveAttribute('data-call', ids[52]);
  // Back returns to the first page (the URL is the state).
  await page.goBack();
  await expect(page.getByTestId('queue-row')).toHaveCount(50);
  await expect(page.getByTestId('queue-row').first()).toHaveAttribute('data-call', ids[0]);
  // The total over all held calls is at least these 53, and the title carries it.
  const count = await page.getByTestId('queue-count').textContent();
  const total = Number((count ?? '').replace(/,/g, '').match(/(\d+) calls? (is|are) waiting/)![1]);
  expect(total).toBeGreaterThanOrEqual(53);
  await expect(page).toHaveTitle(new RegExp(`^\\(${total}\\) Queue`));
});

test('stats and audit pages show the recorded data and say what is coming', async ({ browser }) => {
  await heldWrite(session('honest'), 'out/honest.md');
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await signIn(page, USERS.admin);
  await page.goto('/stats');
  await expect(page.getByTestId('stats-summary')).toBeVisible();
  expect(Number((await page.getByTestId('stats-calls').textContent())!.replace(/,/g, ''))).toBeGreaterThan(0);
  await expect(page.getByTestId('stats-outcomes')).toContainText('pending');
  await expect(page.getByTestId('stats-coming')).toContainText('Coming next');
  await expect(page.getByText('No decisions have been made yet')).toHaveCount(0);
  await expect(page.getByTestId('stats-chart').locator('svg rect').first()).toBeVisible();
  await expect(page.getByTestId('stats-depth').locator('polyline')).toHaveCount(1);
  await page.screenshot({ path: 'screenshots/stats.png', fullPage: true });
  // A week on a phone: the same charts fit the screen's width.
  const phone = await browser.newContext({ viewport: { width: 375, height: 740 } });
  const small = await phone.newPage();
  await signIn(small, USERS.auditor);
  await small.goto('/stats?range=7d');
  await expect(small.getByTestId('stats-chart')).toContainText('Calls per 6 h by decision');
  const box = await small.getByTestId('stats-chart').locator('svg').boundingBox();
  expect(box!.width).toBeLessThanOrEqual(375);
  await small.screenshot({ path: 'screenshots/stats-phone.png', fullPage: true });
  await page.goto('/audit');
  await expect(page.getByTestId('audit-status')).toContainText('The chain holds');
  await expect(page.getByTestId('audit-row').first()).toBeVisible();
  await expect(page.getByText('No audit events are recorded yet')).toHaveCount(0);
  await page.screenshot({ path: 'screenshots/audit.png', fullPage: true });
});

/** Bytes that crossed the network per URL, from the browser's own accounting. */
async function networkBytes(cdp: CDPSession) {
  const urls = new Map<string, string>();
  const bytes = new Map<string, number>();
  cdp.on('Network.requestWillBeSent', (e: any) => urls.set(e.requestId, e.request.url));
  cdp.on('Network.loadingFinished', (e: any) => {
    const url = urls.get(e.requestId);
    if (url) bytes.set(url, (bytes.get(url) ?? 0) + e.encodedDataLength);
  });
  await cdp.send('Network.enable');
  return bytes;
}

test('static assets are compressed and cached for good; a second page load transfers no wasm', async ({ browser }) => {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const cdp = await ctx.newCDPSession(page);
  const bytes = await networkBytes(cdp);
  const wasm = page.waitForResponse((r) => /\/pkg\/airlock\.[0-9a-f]{16}\.wasm$/.test(r.url()));
  await signIn(page, USERS.auditor);
  await hydrated(page);
  const first = await wasm;
  const headers = first.headers();
  expect(headers['content-encoding']).toMatch(/^(br|gzip)$/);
  expect(headers['cache-control']).toContain('immutable');
  expect(headers['cache-control']).toContain('max-age=31536000');
  const html = await page.request.get('/queue');
  expect(html.headers()['cache-control']).toBe('no-store');
  const wasmUrl = first.url();
  const firstBytes = bytes.get(wasmUrl) ?? 0;
  expect(firstBytes).toBeGreaterThan(0);
  console.log(`first load: ${wasmUrl} ${firstBytes} bytes over the network`);

  // A full second page load: the wasm comes from the browser's cache.
  bytes.clear();
  await page.goto('/grants');
  await hydrated(page);
  await page.reload();
  await hydrated(page);
  const again = [...bytes.entries()].filter(([u]) => u.endsWith('.wasm'));
  expect(again.reduce((n, [, b]) => n + b, 0), `wasm bytes on later loads: ${JSON.stringify(again)}`).toBe(0);
});
