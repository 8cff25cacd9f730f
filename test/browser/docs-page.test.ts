/**
 * The /docs page in a real browser (the lockfile's Chromium, or CHROMIUM_PATH's: test/support/browser.ts): its key
 * bar, which stays at the top, is the only place for keys (Swagger UI's "Authorize" is left out) and starts with
 * an app code filled in; "Execute" without keys sends nothing and says so in the bar; it asks once for an
 * application's keys, keeps them in sessionStorage only, and "Try it out" on get-list answers 200 with the
 * records, signed in the page; a client key opens the /client/ paths. A screenshot of the answered page is kept
 * in test-artifacts/.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { DEFAULT_CONFIG } from '../../bin/local/default-config';
import { launchBrowser } from '../support/browser';
import { ServiceHarness } from '../support/service-harness';

const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts');
const DEMO = { appCode: 'app-demo', accessKey: 'ak-7f3c9a1b2d4e', secret: 'sk-demo-secret' };

// The demo configuration plus an application that requires signature version 2 (docs/interface.md §16).
const V2 = { appCode: 'app-demo-v2', accessKey: 'ak-demo-v2-0001', secret: 'sk-demo-v2-secret' };
const configFile = path.join(tmpdir(), `docs-page-${process.pid}.json`);
const demo = JSON.parse(readFileSync(DEFAULT_CONFIG, 'utf8'));
const demoApp = demo.applications.find((a: { appCode: string }) => a.appCode === DEMO.appCode);
demo.applications.push({
  ...demoApp,
  // Its own application: no users (their key digests are the demo application's, and digests are unique).
  users: undefined,
  appCode: V2.appCode,
  accessKey: V2.accessKey,
  signingSecret: V2.secret,
  signatureVersion: 2,
});
// Written elsewhere, so its functions' files are named from the demo configuration's folder.
for (const fn of demo.functions ?? []) if (fn.file) fn.file = path.resolve(path.dirname(DEFAULT_CONFIG), fn.file);
writeFileSync(configFile, JSON.stringify(demo));
const harness = new ServiceHarness(configFile);
let browser: Browser;
let page: Page;

beforeAll(async () => {
  await harness.start();
  for (const order of [
    { customer_id: 'c-docs-1', amount: 12.5, status: 'new' },
    { customer_id: 'c-docs-2', amount: 30, status: 'new' },
    { customer_id: 'c-docs-3', amount: 99, status: 'paid' },
  ]) {
    const created = await harness.call(
      '/openapi/data/create',
      { datasetCode: 'orders', paramMap: order },
      { app: DEMO },
    );
    expect(created.status).toBe(200);
  }
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await harness.stop();
  rmSync(configFile, { force: true });
});

/**
 * The example body Swagger UI shows for an operation (what "Try it out" starts from), with the operation open. A
 * page loaded with the operation's link in its address (`#/custom%20SQL/executeSql`, put there by opening it)
 * opens it by itself once its spec has arrived. So the link decides who opens it, the page or a click, never how
 * far the page had got: a click after a look made before the spec arrived closed what the page had just opened,
 * and the example then never showed (Playwright's 30 s wait ran out).
 */
async function exampleBody(operationBlock: string): Promise<string> {
  const block = page.locator(operationBlock);
  const summary = block.locator('.opblock-summary').first();
  const body = block.locator('.opblock-body');
  const link = await summary.locator('a.nostyle').getAttribute('href');
  if (link !== null && new URL(page.url()).hash === link) await body.waitFor();
  else if (!(await body.isVisible())) await summary.click();
  return (await block.locator('.body-param__example').first().textContent()) ?? '';
}

const GET_LIST = '#operations-records-getList';
const NEEDS_KEYS =
  'Try it out needs keys: enter an app code with its access key and signing secret, or a client key, in the bar ' +
  'at the top of this page, then Execute again.';

it('before any key: the app code is filled in, there is no Authorize, and Execute points at the key bar', async () => {
  await page.goto(`${harness.url}/docs`);
  await page.locator(GET_LIST).waitFor();
  // A value, not a placeholder, with every configured application offered.
  expect(await page.inputValue('#das-app-code')).toBe('app-demo');
  expect(await page.getAttribute('#das-app-code', 'placeholder')).toBeNull();
  expect(await page.evaluate("[...document.querySelectorAll('#das-app-codes option')].map((o) => o.value)")).toEqual([
    'app-demo',
    'app-partner-eu',
    'app-demo-v2',
  ]);
  // Swagger UI's own key dialog, and each operation's lock, would compete with the bar.
  expect(await page.locator('.auth-wrapper, .btn.authorize, .authorization__btn').count()).toBe(0);

  await exampleBody(GET_LIST);
  await page.locator(`${GET_LIST} .try-out__btn`).click();
  await page.locator(`${GET_LIST} .execute`).click();
  await expect(page.locator('#das-credentials-error').textContent()).resolves.toBe(NEEDS_KEYS);
  // The app code is there: the access key is the field to fill.
  expect(await page.evaluate('document.activeElement.id')).toBe('das-access-key');
  // Nothing was sent, so nothing answered and Execute is not left waiting.
  expect(await page.locator(`${GET_LIST} .live-responses-table`).count()).toBe(0);
  expect(await page.locator(`${GET_LIST} .execute`).textContent()).toBe('Execute');
  expect(harness.logLines.filter((line) => line.operation === 'get-list')).toEqual([]);

  // The bar stays in view wherever the page is scrolled.
  await page.locator('#operations-custom_SQL-executeSql').scrollIntoViewIfNeeded();
  await page.locator('#operations-client_key-loginUserInfo').scrollIntoViewIfNeeded();
  expect(await page.evaluate('window.scrollY')).toBeGreaterThan(0);
  expect((await page.locator('.das-panel').boundingBox())?.y).toBe(0);
}, 60_000);

/** Execute an operation whose "Try it out" is open, and read the answer the page shows: its status and its JSON. */
async function executeAndRead(operationBlock: string) {
  await page.locator(`${operationBlock} .execute`).click();
  const row = `${operationBlock} .live-responses-table tbody tr.response`;
  const status = page.locator(`${row} .response-col_status`).first();
  await status.waitFor({ state: 'visible', timeout: 20_000 });
  const body = await page.locator(`${row} .response-col_description pre`).first().textContent();
  return { status, answer: JSON.parse(body ?? '') };
}

it('asks once for the keys, keeps them in sessionStorage, and signs Try it out in the page', async () => {
  await page.goto(`${harness.url}/docs`);
  const form = page.locator('#das-credentials');
  await form.waitFor({ state: 'visible' });
  await page.fill('#das-app-code', DEMO.appCode);
  await page.fill('#das-access-key', DEMO.accessKey);
  await page.fill('#das-signing-secret', DEMO.secret);
  await page.click('#das-use');
  await expect(page.locator('#das-signing-as-text').textContent()).resolves.toBe(
    'Try it out signs every request as app-demo (keys kept in this tab only).',
  );

  // Reloaded, the page remembers for this tab: it does not ask again.
  await page.reload();
  await page.locator('#das-signing-as').waitFor({ state: 'visible' });
  expect(await form.isVisible()).toBe(false);
  // Evaluated in the page (an expression, as the test's own types have no DOM).
  const stored = await page.evaluate(
    "({ session: sessionStorage.getItem('das-docs-credentials'), local: localStorage.length, cookies: document.cookie })",
  );
  expect(stored).toEqual({
    session: JSON.stringify({ appCode: 'app-demo', accessKey: DEMO.accessKey, signingSecret: DEMO.secret }),
    local: 0,
    cookies: '',
  });

  // get-list's example body: status new, amount from 10, highest amount first.
  const getList = GET_LIST;
  await exampleBody(getList);
  await page.locator(`${getList} .try-out__btn`).click();
  const { status, answer } = await executeAndRead(getList);
  expect((await status.textContent())?.trim()).toBe('200');
  expect(answer.success).toBe(true);
  expect(answer.data.paging.totalCount).toBe(2);
  expect(answer.data.tableData.map((r: { customer_id: string }) => r.customer_id)).toEqual(['c-docs-2', 'c-docs-1']);

  mkdirSync(ARTIFACTS, { recursive: true });
  await status.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs-try-it-out.png'), fullPage: false });

  // The service saw a signed get-list from the demo application, which it accepted.
  expect(harness.logLines.filter((line) => line.operation === 'get-list')).toEqual([
    expect.objectContaining({ appCode: 'app-demo', datasetCode: 'orders', errors: 0 }),
  ]);
}, 90_000);

it('shows the same executeSql example on every load', async () => {
  const executeSql = '#operations-custom_SQL-executeSql';
  const first = await exampleBody(executeSql);
  await page.reload();
  const second = await exampleBody(executeSql);
  expect(JSON.parse(first)).toEqual({
    appCode: 'app-demo',
    sqlCode: 'revenue-by-status',
    params: { since: '2024-01-01 00:00:00' },
  });
  expect(second).toBe(first);
}, 60_000);

it('signs version 2 for an application that requires it', async () => {
  await page.click('#das-forget');
  await page.locator('#das-credentials').waitFor({ state: 'visible' });
  await page.fill('#das-app-code', V2.appCode);
  await page.fill('#das-access-key', V2.accessKey);
  await page.fill('#das-signing-secret', V2.secret);
  await page.click('#das-use');
  const getList = GET_LIST;
  await exampleBody(getList);
  if (await page.locator(`${getList} .try-out__btn`).isVisible())
    await page.locator(`${getList} .try-out__btn`).click();
  const { status, answer } = await executeAndRead(getList);
  expect((await status.textContent())?.trim()).toBe('200');
  expect(answer.data.tableData.map((r: { customer_id: string }) => r.customer_id)).toEqual(['c-docs-2', 'c-docs-1']);
  // A version-1 token would have been refused (1002): the service accepted a version-2 one.
  expect(harness.logLines.filter((line) => line.appCode === V2.appCode)).toEqual([
    expect.objectContaining({ operation: 'get-list', errors: 0 }),
  ]);
}, 60_000);

it('sends a client key to the /client/ paths, GET ones included, and asks for one where signed keys cannot go', async () => {
  const login = '#operations-client_key-loginUserInfo';
  // Signed keys (version 2's, from the test above) do not open a /client/ path: nothing is sent.
  if (!(await page.locator(`${login} .opblock-body`).isVisible()))
    await page.locator(`${login} .opblock-summary`).click();
  await page.locator(`${login} .try-out__btn`).click();
  await page.locator(`${login} .execute`).click();
  await expect(page.locator('#das-signing-as-text').textContent()).resolves.toBe(
    'This path takes a client key (X-User-AK): Forget the keys in the bar at the top of this page, enter the app ' +
      'code with a client key, then Execute again.',
  );
  expect(harness.logLines.filter((line) => line.operation === 'login-user-info')).toEqual([]);

  await page.click('#das-forget');
  await page.fill('#das-app-code', DEMO.appCode);
  await page.fill('#das-client-key', 'dasu_demo-analyst-local-only-key-0000000000');
  await page.click('#das-use');
  const { status, answer } = await executeAndRead(login);
  expect((await status.textContent())?.trim()).toBe('200');
  expect(answer.data).toEqual({
    id: 'demo-analyst',
    userName: 'Demo Analyst',
    loginName: 'analyst@example.com',
    appCode: 'app-demo',
    role: 'analyst',
  });
}, 60_000);
