/**
 * Updates under contention (docs/interface.md §4, §18) over HTTP: 300 concurrent updates of one record, each
 * setting a field of its own, are all applied, each with a revision and one change event of its own, and no
 * value is lost; one the store cannot take in time is refused cleanly (4001 with Retry-After), never timed out.
 */
import path from 'node:path';
import { type AppCredentials, type CallResult, ServiceHarness } from '../../../../support/service-harness';

const BUSY: AppCredentials = { appCode: 'app-busy', accessKey: 'ak-busy-00000001', secret: 'sk-busy-secret' };
const SETTLE_MS = 500;
const harness = new ServiceHarness(path.join(__dirname, '../../../../fixtures/contention-config.json'), {
  changeSettleMs: SETTLE_MS,
});
beforeAll(() => harness.start());
afterAll(() => harness.stop());

/** Every event of the feed once (the feed is at least once: an event may come twice, with the same eventId). */
async function allEvents(): Promise<Record<string, unknown>[]> {
  await harness.changesSettled();
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS + 100));
  const events = new Map<string, Record<string, unknown>>();
  let after: string | undefined;
  for (;;) {
    const page = await harness.changes({ limit: 500, ...(after ? { after } : {}) }, { app: BUSY });
    expect(page.status).toBe(200);
    for (const event of page.body.data.events) events.set(event.eventId, event);
    if (!page.body.data.hasMore) return [...events.values()];
    after = page.body.data.cursor;
  }
}

/**
 * Sends every update at once; one refused cleanly (4001 with `Retry-After: 1`: the store could not take it in time)
 * is sent again after its Retry-After, as a client honouring it does. Any other refusal fails the test.
 */
async function sentUntilApplied(sends: (() => Promise<CallResult>)[]): Promise<CallResult[]> {
  const answers = await Promise.all(sends.map((send) => send()));
  for (let round = 0; round < 10 && answers.some((answer) => answer.status !== 200); round++) {
    const refused = answers.flatMap((answer, i) => (answer.status === 200 ? [] : [i]));
    for (const i of refused) {
      expect([answers[i]?.body.errorCode, answers[i]?.headers.get('retry-after')]).toEqual([4001, '1']);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const again = await Promise.all(refused.map((i) => (sends[i] as () => Promise<CallResult>)()));
    refused.forEach((i, k) => {
      answers[i] = again[k] as CallResult;
    });
  }
  return answers;
}

it('applies 300 concurrent updates of one record, each with its own field, revision and event', async () => {
  const created = await harness.create('wide', { status: 'new', region: 'EU' }, { app: BUSY });
  expect(created.status).toBe(200);
  const id = created.body.data.id as string;
  const answers = await sentUntilApplied(
    Array.from(
      { length: 300 },
      (_, i) => () => harness.update('wide', { id, [`c${i + 1}`]: `value ${i + 1}` }, { app: BUSY }),
    ),
  );
  expect(answers.map((answer) => answer.status)).toEqual(Array(300).fill(200));
  const revisions = answers.map((answer) => Number(JSON.parse(answer.headers.get('etag') as string)));
  expect([...revisions].sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, i) => i + 2));
  answers.forEach((answer, i) => {
    expect(answer.body.data[`c${i + 1}`]).toBe(`value ${i + 1}`);
  });

  const read = await harness.getOne('wide', id, { app: BUSY });
  expect(read.headers.get('etag')).toBe('"301"');
  for (let i = 1; i <= 300; i++) expect(read.body.data[`c${i}`]).toBe(`value ${i}`);

  const updates = (await allEvents()).filter((event) => event.id === id && event.type === 'record.updated');
  expect(updates.map((event) => event.revision)).toEqual(Array.from({ length: 300 }, (_, i) => i + 2));
  // Each event names the one field its update changed: the field of the update that answered its revision.
  const fieldOfRevision = new Map(revisions.map((revision, i) => [revision, `c${i + 1}`]));
  for (const event of updates) expect(event.changed).toEqual([fieldOfRevision.get(event.revision as number)]);
}, 120_000);

it('lets updates of an indexed field land among direct updates of the same record, with exact totals', async () => {
  const created = await harness.create('wide', { status: 'new', region: 'EU' }, { app: BUSY });
  const id = created.body.data.id as string;
  const statuses = ['paid', 'shipped', 'new', 'paid', 'shipped', 'paid', 'new', 'shipped', 'paid', 'shipped'];
  const answers = await sentUntilApplied([
    ...Array.from({ length: 60 }, (_, i) => () => harness.update('wide', { id, [`c${i + 1}`]: 'x' }, { app: BUSY })),
    ...statuses.map(
      (status, i) => () => harness.update('wide', { id, status, [`c${200 + i}`]: status }, { app: BUSY }),
    ),
  ]);
  expect(answers.map((answer) => answer.status)).toEqual(Array(70).fill(200));
  const revisions = answers.map((answer) => Number(JSON.parse(answer.headers.get('etag') as string)));
  // A status update whose value the record already held (a 'new' first) changes it through its other field.
  expect(new Set(revisions).size).toBe(70);
  const keyed = revisions.slice(60);
  const last = statuses[keyed.indexOf(Math.max(...keyed))];
  const read = await harness.getOne('wide', id, { app: BUSY });
  expect(read.headers.get('etag')).toBe('"71"');
  expect(read.body.data.status).toBe(last);
  for (const status of ['new', 'paid', 'shipped']) {
    const list = await harness.getList('wide', { id, status }, { app: BUSY });
    expect([status, list.body.data.paging.totalCount]).toEqual([status, status === last ? 1 : 0]);
  }
}, 120_000);
