/**
 * docs/interface.md §21 on the mysql engine (§20): with `--sql-engine mysql://…` an aggregate runs on MariaDB (the
 * local twin of MySQL 8) over the mirror, through the SELECT of what the caller may read: the same answers as on the
 * embedded engine (the aggregate property and text cases of test/support/aggregate-property.ts), the caller's own
 * write counted by the next aggregate, hidden fields unnameable and rows outside the row filter never counted.
 */
import path from 'node:path';
import { aggregateProperties, aggregateTextCases, NARROW, ORDERS } from '../../../support/aggregate-property';
import { expectFailure } from '../../../support/failure-envelope';
import { MariaDb } from '../../../support/mysql-compat/mariadb';
import { describeWithMariaDb } from '../../../support/mysql-compat/with-mariadb';
import { FIXTURES_DIR } from '../../../support/paths';
import { type AppCredentials, ServiceHarness } from '../../../support/service-harness';

/** Nina, a user of the narrow application (sdk-calls-config): its grant, the north region only. */
const NINA_KEY = 'dasu_sdk-calls-nina-0000000000000000000000';

describeWithMariaDb('aggregate on MySQL (MariaDB)', () => {
  let mariadb: MariaDb;
  let harness: ServiceHarness;

  const aggregate = (paramMap: Record<string, unknown>, app?: AppCredentials) =>
    harness.call('/openapi/data/aggregate', { datasetCode: 'orders', paramMap }, app ? { app } : {});
  const data = async (paramMap: Record<string, unknown>, app?: AppCredentials) => {
    const res = await aggregate(paramMap, app);
    // A failure shows the whole envelope: what the service answered, its code and message.
    if (res.body.success !== true) expect(res.body).toEqual({ success: true });
    return res.body.data;
  };

  beforeAll(async () => {
    mariadb = await MariaDb.start('UTC');
    harness = new ServiceHarness(path.join(FIXTURES_DIR, 'sdk-calls-config.json'), {
      sources: true,
      sqlEngine: mariadb.engineUrl('mirror'),
    });
    await harness.start();
    const res = await harness.batchCreate('orders', ORDERS);
    expect(res.body.success).toBe(true);
  }, 120_000);
  afterAll(async () => {
    await harness?.stop();
    await mariadb?.stop();
  });

  // The records of ORDERS alone: these run before the tests below write more.
  aggregateProperties(() => harness, 80);
  aggregateTextCases(() => harness);

  it('runs on the server itself: a row written into the mirror table by hand is counted', async () => {
    await mariadb.connection.query(
      "INSERT INTO mirror.orders (id, customer, region, qty, gmt_create, gmt_modified, revision) VALUES ('by-hand', 'Hand', 'north', 1, NOW(), NOW(), 1)",
    );
    try {
      const hand = { aggregate: [{ type: 'COUNT', alias: 'n' }], where: { customer: 'hand' } };
      expect((await data(hand, NARROW)).tableData).toEqual([{ n: 1 }]);
    } finally {
      await mariadb.connection.query("DELETE FROM mirror.orders WHERE id = 'by-hand'");
    }
  });

  it('sums and counts per group with where, having, orderBy and paging', async () => {
    const request = {
      aggregate: [
        { type: 'SUM', column: 'amount', alias: 'total' },
        { type: 'count', alias: 'n' },
      ],
      groupBy: ['status'],
      where: { qty: { $gteq: 1 } },
      having: { n: { $gte: 4 } },
      orderBy: [{ total: 'desc' }],
      pageSize: 2,
    };
    expect(await data({ ...request, currentPage: 1 }, NARROW)).toEqual({
      tableData: [
        { status: 'paid', total: 50.5, n: 8 },
        { status: 'new', total: 19, n: 4 },
      ],
      paging: { currentPage: 1, pageSize: 2, totalCount: 3 },
      tableColumns: [
        { title: 'status', dataIndex: 'status' },
        { title: 'total', dataIndex: 'total' },
        { title: 'n', dataIndex: 'n' },
      ],
    });
    const second = await data({ ...request, currentPage: 2 }, NARROW);
    expect(second.tableData).toEqual([{ status: 'void', total: 17, n: 4 }]);
    expect(second.paging).toEqual({ currentPage: 2, pageSize: 2, totalCount: 3 });
  });

  it('never counts rows outside the row filter, though the mirror holds them', async () => {
    const count = { aggregate: [{ type: 'COUNT', alias: 'n' }] };
    expect((await data(count, NARROW)).tableData).toEqual([{ n: 26 }]);
    expect((await data({ ...count, where: { region: 'south' } }, NARROW)).tableData).toEqual([{ n: 0 }]);
    expect((await data({ ...count, groupBy: ['region'] }, NARROW)).tableData).toEqual([{ region: 'north', n: 26 }]);
    expect((await data({ ...count, groupBy: ['region'] })).tableData).toEqual([
      { region: 'north', n: 26 },
      { region: 'south', n: 14 },
    ]);
  });

  it("is served on the client-key path with the user's grant", async () => {
    const response = await fetch(`${harness.url}/client/data/aggregate`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-User-AK': NINA_KEY },
      body: JSON.stringify({
        appCode: NARROW.appCode,
        datasetCode: 'orders',
        paramMap: { aggregate: [{ type: 'COUNT', alias: 'n' }], groupBy: ['region'] },
      }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: { tableData: unknown } }).data.tableData).toEqual([
      { region: 'north', n: 26 },
    ]);
  });

  it('answers a hidden field as an unknown one (1001), wherever it is named', async () => {
    expectFailure(
      await aggregate({ aggregate: [{ type: 'SUM', column: 'cost' }] }, NARROW),
      1001,
      /^aggregate\[0\]\.column: unknown field 'cost' in dataset 'orders'/,
    );
    expectFailure(
      await aggregate({ aggregate: [{ type: 'COUNT' }], groupBy: ['cost'] }, NARROW),
      1001,
      /^groupBy\[0\]: unknown field 'cost'/,
    );
    expectFailure(
      await aggregate({ aggregate: [{ type: 'COUNT' }], where: { cost: { $gt: 0 } } }, NARROW),
      1001,
      /^where\.cost: unknown field 'cost'/,
    );
    // The caller with every field reads it, from the same mirror table.
    expect((await data({ aggregate: [{ type: 'SUM', column: 'cost', alias: 'cost' }] })).tableData).toEqual([
      { cost: 8580 },
    ]);
  });

  it('answers 2001 at its 5 s limit, waiting for the mirror included, and the next aggregate runs', async () => {
    // A write lock held on the mirror table keeps the mirror's round or the statement itself waiting: either way the
    // request ends at its limit (the round's wait, or KILL QUERY sent by the engine).
    await mariadb.connection.query('LOCK TABLES mirror.orders WRITE');
    const started = Date.now();
    try {
      expectFailure(
        await aggregate({ aggregate: [{ type: 'COUNT', alias: 'n' }] }, NARROW),
        2001,
        /^the (MySQL mirror did not catch up with the writes made before this query within|query ran longer than) its limit of 5000 ms/,
      );
    } finally {
      await mariadb.connection.query('UNLOCK TABLES');
    }
    expect(Date.now() - started).toBeLessThan(10_000);
    // The mirror's round that waited on the lock ends now; a round that began after the next aggregate started may
    // take longer than its 5 s on a busy machine: the client retries a 2001 as Retry-After says, a few times.
    let next = await aggregate({ aggregate: [{ type: 'COUNT', alias: 'n' }] }, NARROW);
    for (let attempt = 0; attempt < 3 && next.body.errorCode === 2001; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 1_000 * Number(next.headers.get('retry-after') ?? 1)));
      next = await aggregate({ aggregate: [{ type: 'COUNT', alias: 'n' }] }, NARROW);
    }
    expect(next.body).toMatchObject({ success: true, data: { tableData: [{ n: 26 }] } });
  }, 60_000);

  it('counts a write made just before it, a create and an update alike', async () => {
    const totals = {
      aggregate: [
        { type: 'COUNT', alias: 'n' },
        { type: 'SUM', column: 'qty', alias: 'qty' },
      ],
    };
    const [before] = (await data(totals)).tableData;
    const created = await harness.create('orders', { customer: 'Kim', status: 'new', region: 'north', qty: 4 });
    expect(created.body.success).toBe(true);
    expect((await data(totals)).tableData).toEqual([{ n: before.n + 1, qty: before.qty + 4 }]);
    const updated = await harness.update('orders', { id: created.body.data.id, qty: 9 });
    expect(updated.body.success).toBe(true);
    expect((await data(totals)).tableData).toEqual([{ n: before.n + 1, qty: before.qty + 9 }]);
  });

  it('groups text differing only in letter case together, as MySQL 8 does', async () => {
    for (const customer of ['Lou', 'LOU', 'lou'])
      expect((await harness.create('orders', { customer, region: 'north', qty: 1 })).body.success).toBe(true);
    const answer = await data(
      { aggregate: [{ type: 'COUNT', alias: 'n' }], groupBy: ['customer'], where: { customer: 'lou' } },
      NARROW,
    );
    expect(answer.tableData).toHaveLength(1);
    expect(answer.tableData[0].n).toBe(3);
    expect(['Lou', 'LOU', 'lou']).toContain(answer.tableData[0].customer);
  });
});
