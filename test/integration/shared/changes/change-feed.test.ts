/**
 * docs/interface.md §18, the pull feed over HTTP: every create and every update that changes a record gives one
 * event, in revision order, seen through the reader's grant (fields, rows, a last record.left_scope), paged by an
 * opaque cursor; an update that changes nothing, or only fields the reader cannot see, gives that reader none.
 */
import path from 'node:path';
import { createClient } from '../../../../packages/client/src/index';
import { expectFailure } from '../../../support/failure-envelope';
import { type AppCredentials, type CallResult, ServiceHarness } from '../../../support/service-harness';

const FULL: AppCredentials = { appCode: 'app-full', accessKey: 'ak-full-00000001', secret: 'sk-full-secret' };
const LIMITED: AppCredentials = {
  appCode: 'app-limited',
  accessKey: 'ak-limited-000001',
  secret: 'sk-limited-secret',
};
const SETTLE_MS = 150;

const harness = new ServiceHarness(path.join(__dirname, '..', '..', '..', 'fixtures', 'permissions-config.json'), {
  changeSettleMs: SETTLE_MS,
});
beforeAll(() => harness.start());
afterAll(() => harness.stop());

/** Wait until the change log has every change made so far, and the feed's settle time has passed. */
async function settled(): Promise<void> {
  await harness.changesSettled();
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS + 50));
}

// biome-ignore lint/suspicious/noExplicitAny: events are read as the JSON they are
type Event = any;

/** Every event the feed holds for `app` after `cursor`, page by page. */
async function readFeed(
  app: AppCredentials,
  after?: string,
  limit = 100,
): Promise<{ events: Event[]; cursor: string }> {
  const events: Event[] = [];
  let cursor = after;
  for (;;) {
    const page: CallResult = await harness.changes({ ...(cursor ? { after: cursor } : {}), limit }, { app });
    expect(page.status).toBe(200);
    events.push(...page.body.data.events);
    cursor = page.body.data.cursor;
    if (!page.body.data.hasMore) return { events, cursor: cursor as string };
  }
}

describe('the change feed', () => {
  /** Each test reads from where the feed ends when it starts. */
  let start: { full: string; limited: string };
  beforeEach(async () => {
    await settled();
    start = { full: (await readFeed(FULL)).cursor, limited: (await readFeed(LIMITED)).cursor };
  });

  it('gives one event per create and per update that changes the record, in revision order', async () => {
    const created = await harness.create('orders', { customer: 'Ada', amount: 10, region: 'EU' }, { app: FULL });
    const id = created.body.data.id as string;
    const updated = await harness.update('orders', { id, amount: 12 }, { app: FULL });
    expect(updated.headers.get('etag')).toBe('"2"');
    // Nothing changes: no revision, no event.
    const same = await harness.update('orders', { id, amount: 12 }, { app: FULL });
    expect(same.headers.get('etag')).toBe('"2"');
    await settled();

    const { events } = await readFeed(FULL, start.full);
    expect(events).toHaveLength(2);
    const [first, second] = events;
    expect(first).toEqual({
      eventId: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: 'record.created',
      appCode: 'app-owner',
      datasetCode: 'orders',
      id,
      revision: 1,
      occurredAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      // As get-one answered it then: every field the reader may read, null when unset.
      record: {
        id,
        customer: 'Ada',
        amount: 10,
        status: null,
        region: 'EU',
        margin: null,
        gmt_create: created.body.data.gmt_create,
        gmt_modified: created.body.data.gmt_modified,
      },
      actor: { appCode: 'app-full', userId: null },
      requestId: created.headers.get('x-request-id'),
    });
    expect(second).toMatchObject({
      type: 'record.updated',
      id,
      revision: 2,
      changed: ['amount'],
      record: { id, customer: 'Ada', amount: 12, region: 'EU' },
      actor: { appCode: 'app-full', userId: null },
      requestId: updated.headers.get('x-request-id'),
    });
    expect(second.eventId).not.toBe(first.eventId);
  });

  it('narrows events through the reader grant: its fields, its rows, and a last record.left_scope', async () => {
    const inEu = await harness.create('orders', { customer: 'Eve', amount: 5, region: 'EU', margin: 1 }, { app: FULL });
    const id = inEu.body.data.id as string;
    const outside = await harness.create('orders', { customer: 'Bob', region: 'US' }, { app: FULL });
    await harness.update('orders', { id, margin: 2 }, { app: FULL }); // a field app-limited cannot read
    await harness.update('orders', { id, status: 'paid' }, { app: FULL });
    // What get-one shows app-limited of the record at revision 3: the event of revision 3 must say the same.
    const seen = await harness.getOne('orders', id, { app: LIMITED });
    await harness.update('orders', { id, region: 'US' }, { app: FULL }); // leaves app-limited's rows
    await harness.update('orders', { id, status: 'shipped' }, { app: FULL }); // outside: nothing more
    await settled();

    const { events } = await readFeed(LIMITED, start.limited);
    expect(events.map((e: Event) => [e.type, e.id, e.revision, e.changed ?? null])).toEqual([
      ['record.created', id, 1, null],
      ['record.updated', id, 3, ['status']],
      ['record.left_scope', id, 4, null],
    ]);
    expect(events[0].record).toEqual({
      id,
      customer: 'Eve',
      status: null,
      region: 'EU',
      gmt_create: inEu.body.data.gmt_create,
      gmt_modified: inEu.body.data.gmt_modified,
    });
    expect(events[1].record).toEqual(seen.body.data);
    expect(Object.keys(events[1].record).sort()).toEqual([
      'customer',
      'gmt_create',
      'gmt_modified',
      'id',
      'region',
      'status',
    ]);
    expect(events[2].record).toBeNull();
    expect(events.some((e: Event) => e.id === outside.body.data.id)).toBe(false);

    // The full reader sees every one of them, and the other record too.
    const full = await readFeed(FULL, start.full);
    expect(full.events.filter((e: Event) => e.id === id).map((e: Event) => e.revision)).toEqual([1, 2, 3, 4, 5]);
    expect(full.events.filter((e: Event) => e.id === outside.body.data.id).map((e: Event) => e.type)).toEqual([
      'record.created',
    ]);
  });

  it('pages with the cursor: each event once, hasMore while more are there', async () => {
    const ids: string[] = [];
    for (const customer of ['P1', 'P2', 'P3']) {
      ids.push((await harness.create('orders', { customer, region: 'EU' }, { app: FULL })).body.data.id);
    }
    await settled();
    const first = await harness.changes({ after: start.full, limit: 2 }, { app: FULL });
    expect(first.body.data.events.map((e: Event) => e.id)).toEqual(ids.slice(0, 2));
    expect(first.body.data.hasMore).toBe(true);
    const second = await harness.changes({ after: first.body.data.cursor, limit: 2 }, { app: FULL });
    expect(second.body.data.events.map((e: Event) => e.id)).toEqual(ids.slice(2));
    expect(second.body.data.hasMore).toBe(false);
    const empty = await harness.changes({ after: second.body.data.cursor }, { app: FULL });
    expect(empty.body.data).toEqual({ events: [], cursor: expect.any(String), hasMore: false });
  });

  it('is what the client package iterates with changes(), resuming from its cursor', async () => {
    const client = createClient({
      baseUrl: harness.url,
      appCode: FULL.appCode,
      accessKey: FULL.accessKey,
      signingSecret: FULL.secret,
    });
    const a = (await harness.create('orders', { customer: 'C1', region: 'EU' }, { app: FULL })).body.data.id;
    const b = (await harness.create('orders', { customer: 'C2', region: 'EU' }, { app: FULL })).body.data.id;
    await settled();
    const feed = client.changes({ after: start.full, limit: 1 });
    const seen: string[] = [];
    for await (const event of feed) seen.push(`${event.type} ${event.id} ${event.revision}`);
    expect(seen).toEqual([`record.created ${a} 1`, `record.created ${b} 1`]);
    const c = (await harness.create('orders', { customer: 'C3', region: 'EU' }, { app: FULL })).body.data.id;
    await settled();
    const more: string[] = [];
    for await (const event of client.changes({ after: feed.cursor })) more.push(event.id);
    expect(more).toEqual([c]);
  });

  it('refuses a malformed cursor and a limit outside 1 to 500 with 1001', async () => {
    expectFailure(await harness.changes({ after: 'not-a-cursor' }, { app: FULL }), 1001, /paramMap\.after/);
    expectFailure(await harness.changes({ limit: 0 }, { app: FULL }), 1001, /paramMap\.limit/);
    expectFailure(await harness.changes({ limit: 501 }, { app: FULL }), 1001, /paramMap\.limit/);
    expectFailure(await harness.changes({ since: 'yesterday' }, { app: FULL }), 1001, /paramMap\.since/);
  });
});
