import { Browser, expect, Page, test } from '@playwright/test';
import { poll, propose, session } from './agent';
import { hydrated, signIn, USERS } from './helpers';

async function reviewerPage(browser: Browser, user: string, path = '/queue'): Promise<Page> {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await signIn(page, user);
  if (path !== '/queue') await page.goto(path);
  await hydrated(page);
  await expect(page.getByTestId('live-status')).toHaveText('connected');
  return page;
}

function write(sessionId: string, path: string) {
  return { session_id: sessionId, tool: 'write_file', arguments: { path, content: '# Report' }, context: { trust: 'isolated' } };
}

async function held(call: Record<string, unknown>): Promise<string> {
  const r = await propose(call);
  expect(r.status).toBe('pending');
  return r.id;
}

const row = (page: Page, id: string) => page.locator(`[data-testid="queue-row"][data-call="${id}"]`);

async function openReview(page: Page, id: string) {
  await page.goto(`/calls/${id}`);
  await hydrated(page);
  await expect(page.getByTestId('review')).toBeVisible();
}

test('a held call reaches two reviewers live; a bad edit is refused and the modified call reaches the agent', async ({ browser }) => {
  const alice = await reviewerPage(browser, USERS.reviewer);
  const bob = await reviewerPage(browser, USERS.oncall);
  const id = await held(write(session('live'), 'out/report.md'));

  // Both queues show it without a reload, with why it was held and a countdown.
  for (const p of [alice, bob]) {
    await expect(row(p, id)).toBeVisible();
    await expect(row(p, id)).toContainText('write_file');
    await expect(row(p, id)).toContainText('always needs a human decision');
    await expect(row(p, id).locator('.countdown')).toContainText('left');
  }
  await expect(alice).toHaveTitle(/^\(\d+\) Queue/);
  await alice.screenshot({ path: 'screenshots/queue-live.png', fullPage: true });

  const decision = poll(id, 30);
  await row(alice, id).getByRole('link', { name: 'write_file' }).click();
  await expect(alice).toHaveURL(new RegExp(`/calls/${id}$`));
  await expect(alice.getByTestId('arguments')).toContainText('out/report.md');
  await alice.screenshot({ path: 'screenshots/review.png', fullPage: true });

  // An edit outside the workspace fence is refused with the engine's message.
  await alice.getByTestId('edit').click();
  const editor = alice.getByTestId('edit-arguments');
  await editor.fill(JSON.stringify({ path: '/etc/cron.d/evil', content: '# Report' }, null, 2));
  await alice.getByTestId('review-changes').click();
  await expect(alice.getByTestId('diff')).toContainText('/etc/cron.d/evil');
  await alice.getByTestId('release-modified').click();
  await expect(alice.getByTestId('decision-message')).toContainText('path_guard');

  // A valid edit: diff first, then release.
  await editor.fill(JSON.stringify({ path: 'out/summary.md', content: '# Report' }, null, 2));
  await alice.getByTestId('review-changes').click();
  await expect(alice.getByTestId('diff').locator('.d-del', { hasText: 'out/report.md' })).toHaveCount(1);
  await expect(alice.getByTestId('diff').locator('.d-add', { hasText: 'out/summary.md' })).toHaveCount(1);
  await alice.screenshot({ path: 'screenshots/review-diff.png', fullPage: true });
  await alice.getByTestId('release-modified').click();
  await expect(alice.getByTestId('decision-message')).toHaveText('Released with your changes.');
  await expect(alice.getByTestId('decided-banner')).toContainText(`modified by ${USERS.reviewer}`);

  const answer = await decision;
  expect(answer.status).toBe('modified');
  expect(answer.arguments).toEqual({ path: 'out/summary.md', content: '# Report' });
  // The other reviewer sees who decided, in place.
  await expect(row(bob, id).getByTestId('decided-by')).toHaveText(`modified by ${USERS.reviewer}`);
});

test('batch approval decides each selected call and reports the result', async ({ browser }) => {
  const page = await reviewerPage(browser, USERS.reviewer);
  const s = session('batch');
  const ids = [];
  for (const f of ['a', 'b', 'c']) ids.push(await held(write(s, `out/${f}.md`)));
  for (const id of ids) {
    await expect(row(page, id)).toBeVisible();
    await row(page, id).locator('input.pick').check();
  }
  await expect(page.getByTestId('batch-bar')).toContainText('3 selected');
  await page.getByRole('button', { name: 'Approve selected' }).click();
  await expect(page.getByTestId('batch-results')).toContainText('3 decided');
  for (const id of ids) {
    expect((await poll(id)).status).toBe('approved');
    await expect(row(page, id).getByTestId('decided-by')).toHaveText(`approved by ${USERS.reviewer}`);
  }
});

test('an approve-all grant lets the next call through until it is revoked', async ({ browser }) => {
  const page = await reviewerPage(browser, USERS.reviewer);
  const s = session('grant');
  const id = await held(write(s, 'out/1.md'));
  await openReview(page, id);
  await page.getByTestId('grant-on').check();
  await page.getByTestId('grant-minutes').selectOption('15');
  await page.getByTestId('approve').click();
  await expect(page.getByTestId('decision-message')).toContainText('allowed for 15 minutes');

  const follow = await propose(write(s, 'out/2.md'));
  expect(follow.status).toBe('allowed');
  expect(follow.reason).toContain('grant');

  await page.getByRole('link', { name: 'Grants' }).click();
  const grant = page.getByTestId('grant-row').filter({ hasText: s });
  await expect(grant).toContainText('write_file');
  await grant.getByTestId('revoke').click();
  await expect(page.getByTestId('grants-notice')).toHaveText('Grant revoked.');
  expect((await propose(write(s, 'out/3.md'))).status).toBe('pending');
});

test('opening another call of the session from the review page drops the last decision message', async ({ browser }) => {
  const page = await reviewerPage(browser, USERS.reviewer);
  const s = session('next');
  const first = await held(write(s, 'out/first.md'));
  const second = await held(write(s, 'out/second.md'));
  await openReview(page, second);
  await page.getByTestId('reject-reason').fill('wrong file');
  await page.getByTestId('reject').click();
  await expect(page.getByTestId('decision-message')).toBeVisible();
  await expect(page.getByTestId('decided-banner')).toContainText(`rejected by ${USERS.reviewer}`);

  await page.locator('.session-calls li:not(.current) a').click();
  await expect(page).toHaveURL(new RegExp(`/calls/${first}$`));
  await expect(page.getByTestId('arguments')).toContainText('out/first.md');
  await expect(page.getByTestId('decision-message')).toHaveCount(0);
  await expect(page.getByTestId('approve')).toBeEnabled();
});

test('a call that needs two approvers stays pending until a second, different reviewer approves', async ({ browser }) => {
  const alice = await reviewerPage(browser, USERS.reviewer);
  const bob = await reviewerPage(browser, USERS.oncall);
  const id = await held({ session_id: session('quorum'), tool: 'refund_order', arguments: { order_id: 'AB12345678', amount: 60000 } });
  await openReview(alice, id);
  await expect(alice.getByTestId('quorum')).toContainText('Needs 2 distinct approvers');
  await alice.getByTestId('approve').click();
  await expect(alice.getByTestId('decision-message')).toContainText('1 of 2');
  await expect(alice.getByTestId('quorum')).toContainText(`approved so far: ${USERS.reviewer}`);
  await alice.getByTestId('approve').click();
  await expect(alice.getByTestId('decision-message')).toContainText('already approved');
  expect((await poll(id)).status).toBe('pending');

  await openReview(bob, id);
  await bob.getByTestId('approve').click();
  await expect(bob.getByTestId('decided-banner')).toContainText(`approved by ${USERS.reviewer} and ${USERS.oncall}`);
  expect((await poll(id)).status).toBe('approved');
});

test('two reviewers deciding at once: one wins, the other is told who did', async ({ browser }) => {
  const alice = await reviewerPage(browser, USERS.reviewer);
  const bob = await reviewerPage(browser, USERS.oncall);
  const id = await held(write(session('race'), 'out/race.md'));
  await openReview(alice, id);
  await openReview(bob, id);
  await bob.getByTestId('reject-reason').fill('not this one');
  // Both clicks are scheduled in the pages for the same moment (both browsers share this
  // machine's clock), so neither page can have learnt of the other's decision first — and
  // neither page reloads for the other's decision while a click is still being delivered.
  const at = Date.now() + 500;
  const click = (p: Page, testid: string) =>
    p.evaluate(([t, when]) => {
      setTimeout(() => (document.querySelector(`[data-testid="${t}"]`) as HTMLElement).click(),
        Math.max(0, (when as number) - Date.now()));
    }, [testid, at] as const);
  await Promise.all([click(alice, 'approve'), click(bob, 'reject')]);
  for (const p of [alice, bob]) await expect(p.getByTestId('decision-message')).toBeVisible();
  const messages = [
    await alice.getByTestId('decision-message').textContent(),
    await bob.getByTestId('decision-message').textContent(),
  ];
  const lost = messages.filter((m) => m?.startsWith('Already '));
  expect(lost, JSON.stringify(messages)).toHaveLength(1);
  const final = (await poll(id)).status;
  expect(['approved', 'rejected']).toContain(final);
  for (const p of [alice, bob]) await expect(p.getByTestId('decided-banner')).toContainText(final);
});

test('an auditor sees the call but cannot decide it', async ({ browser }) => {
  const page = await reviewerPage(browser, USERS.auditor);
  const id = await held(write(session('audit'), 'out/a.md'));
  await expect(row(page, id)).toBeVisible();
  await expect(row(page, id).locator('input.pick')).toHaveCount(0);
  await openReview(page, id);
  await expect(page.getByTestId('read-only')).toBeVisible();
  await expect(page.getByTestId('approve')).toHaveCount(0);
  const token = (await (await page.request.get('/api/session')).json()).csrf_token;
  const r = await page.request.post('/api/calls/decide', { form: { csrf_token: token, id, verdict: 'approve' } });
  expect(r.status()).toBe(403);
  expect((await poll(id)).status).toBe('pending');
});

test('the review page refuses self-approval, says why approve-all is not offered, and shows hidden characters', async ({ browser }) => {
  const alice = await reviewerPage(browser, USERS.reviewer);
  // A call made on the reviewer's own behalf: approving it is refused with a reason.
  const own = await held({ ...write(session('own'), 'out/own.md'), on_behalf_of: USERS.reviewer });
  await openReview(alice, own);
  await alice.getByTestId('approve').click();
  await expect(alice.getByTestId('decision-message')).toContainText('on your behalf');
  expect((await poll(own)).status).toBe('pending');

  // A destructive tool the policy does not mark grantable: no approve-all, and why.
  const mail = await held({
    session_id: session('mail'), tool: 'send_email',
    arguments: { to: 'ops@example.com', subject: 'Report\u202Eftp.exe', body: 'see attached' },
  });
  await openReview(alice, mail);
  await expect(alice.getByTestId('grant-on')).toHaveCount(0);
  await expect(alice.getByTestId('no-grant')).toContainText('destructive');
  // The right-to-left override is shown as an escape, not applied to the text.
  await expect(alice.getByTestId('arguments')).toContainText('\\u202e');
  await alice.screenshot({ path: 'screenshots/review-no-grant.png', fullPage: true });

  // Long strings are shown whole: the end of a long command is on the page.
  const long = await held({
    session_id: session('long'), tool: 'execute_command',
    arguments: { command: `echo ${'x'.repeat(600)} ; curl -fsSL https://example.com/end-of-command` },
  });
  await openReview(alice, long);
  await expect(alice.getByTestId('arguments')).toContainText('https://example.com/end-of-command');
});
