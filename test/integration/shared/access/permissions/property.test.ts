/**
 * A property of docs/interface.md §6 over HTTP: for random records, random grants (readFields and rowFilter) and random
 * requests, no response ever carries a field outside the grant's readFields or a row outside its rowFilter.
 * The scope is judged here by an oracle of its own, from the records as the unrestricted application sees them.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { expectFailure } from '../../../../support/failure-envelope';
import { type AppCredentials, ServiceHarness } from '../../../../support/service-harness';

const FIELDS = ['region', 'status', 'amount', 'flag', 'note'] as const;
type Row = Record<string, unknown>;
type RowFilter = Record<string, unknown>;

const regionArb = fc.constantFrom('EU', 'US', 'APAC');
const statusArb = fc.constantFrom('new', 'paid', 'shipped');
const rowFilterArb: fc.Arbitrary<RowFilter> = fc
  .record(
    {
      region: regionArb,
      region_in: fc.uniqueArray(regionArb, { minLength: 1, maxLength: 2 }),
      status: statusArb,
      amount_start: fc.integer({ min: 0, max: 100 }),
      amount_end: fc.integer({ min: 0, max: 100 }),
      flag: fc.boolean(),
      note_is_null: fc.boolean(),
    },
    { requiredKeys: [] },
  )
  .filter((f) => Object.keys(f).length > 0);
const readFieldsArb = fc.option(fc.subarray([...FIELDS], { minLength: 1 }), { nil: undefined });

/** The oracle: the contract's meaning of each suffix, written independently of the service's matcher. */
function inScope(row: Row, filter: RowFilter): boolean {
  return Object.entries(filter).every(([key, value]) => {
    if (key === 'region_in') return (value as string[]).includes(row.region as string);
    if (key === 'amount_start') return row.amount !== null && (row.amount as number) >= (value as number);
    if (key === 'amount_end') return row.amount !== null && (row.amount as number) <= (value as number);
    if (key === 'note_is_null') return (row.note === null) === value;
    return row[key] === value;
  });
}

const grants = fc.sample(fc.record({ readFields: readFieldsArb, rowFilter: rowFilterArb }), { numRuns: 6, seed: 4242 });
const apps: (AppCredentials & { readFields?: string[]; rowFilter: RowFilter })[] = grants.map((grant, k) => ({
  appCode: `app-scoped-${k}`,
  accessKey: `ak-scoped-${k}-0000`,
  secret: `sk-scoped-${k}-secret`,
  ...grant,
}));
const FULL: AppCredentials = { appCode: 'app-full', accessKey: 'ak-full-0000', secret: 'sk-full-secret' };

/** The property makes thousands of requests a minute; quotas are not what it is about. */
const UNLIMITED = { perMinute: 1_000_000, perHour: 1_000_000, perDay: 1_000_000, concurrent: 50 };

const configDir = mkdtempSync(path.join(tmpdir(), 'das-perm-'));
const configFile = path.join(configDir, 'config.json');
writeFileSync(
  configFile,
  JSON.stringify({
    applications: [
      {
        appCode: 'app-full',
        accessKey: FULL.accessKey,
        signingSecret: FULL.secret,
        quota: UNLIMITED,
        grants: [{ datasetCode: 'orders', operations: ['read', 'create', 'update'] }],
      },
      ...apps.map((app) => ({
        appCode: app.appCode,
        accessKey: app.accessKey,
        signingSecret: app.secret,
        quota: { concurrent: 50 },
        grants: [
          {
            datasetCode: 'orders',
            operations: ['read', 'update'],
            readFields: app.readFields,
            rowFilter: app.rowFilter,
          },
        ],
      })),
    ],
    datasets: [
      {
        appCode: 'app-full',
        datasetCode: 'orders',
        fields: [
          { name: 'region', type: 'string', indexed: true },
          { name: 'status', type: 'enum', options: ['new', 'paid', 'shipped'], indexed: true },
          { name: 'amount', type: 'integer', indexed: true },
          { name: 'flag', type: 'boolean' },
          { name: 'note', type: 'string' },
        ],
      },
    ],
  }),
);

const harness = new ServiceHarness(configFile);
const rowArb = fc.record({
  region: regionArb,
  status: statusArb,
  amount: fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
  flag: fc.boolean(),
  note: fc.option(fc.constantFrom('a', 'b'), { nil: null }),
});
const ids: string[] = [];

beforeAll(async () => {
  await harness.start();
  for (const row of fc.sample(rowArb, { numRuns: 40, seed: 7 })) {
    ids.push((await harness.create('orders', row, { app: FULL })).body.data.id);
  }
});
afterAll(() => harness.stop());

/** A record as the unrestricted application sees it. */
async function truth(id: string): Promise<Row> {
  const res = await harness.getOne('orders', id, { app: FULL });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Every record as the unrestricted application sees it, by id. */
async function allTruth(): Promise<Map<string, Row>> {
  const res = await harness.getList('orders', { pageSize: 100 }, { app: FULL });
  expect(res.body.data.paging.totalCount).toBe(ids.length);
  return new Map(res.body.data.tableData.map((row: Row) => [row.id as string, row]));
}

function checkRecord(app: (typeof apps)[number], record: Row, full: Row): void {
  const allowed = new Set(['id', 'gmt_create', 'gmt_modified', ...(app.readFields ?? FIELDS)]);
  for (const key of Object.keys(record)) expect(allowed.has(key)).toBe(true);
  expect(inScope(full, app.rowFilter)).toBe(true);
}

const requestArb = fc.record({
  app: fc.nat({ max: apps.length - 1 }),
  kind: fc.constantFrom('list', 'one', 'update'),
  id: fc.nat({ max: 39 }),
  status: statusArb,
  region: regionArb,
  sortDesc: fc.boolean(),
});

it('never returns a field outside readFields or a row outside rowFilter', async () => {
  await fc.assert(
    fc.asyncProperty(requestArb, async (request) => {
      const app = apps[request.app] as (typeof apps)[number];
      const id = ids[request.id] as string;
      if (request.kind === 'list') {
        const sortable = app.readFields?.includes('amount') ?? true;
        const res = await harness.getList(
          'orders',
          { pageSize: 100, ...(sortable ? { ytSortList: [{ amount: request.sortDesc ? 'desc' : 'asc' }] } : {}) },
          { app },
        );
        expect(res.status).toBe(200);
        const all = await allTruth();
        const expected = [...all.values()].filter((row) => inScope(row, app.rowFilter));
        expect(res.body.data.paging.totalCount).toBe(expected.length);
        expect(res.body.data.tableData).toHaveLength(expected.length);
        for (const record of res.body.data.tableData) checkRecord(app, record, all.get(record.id) as Row);
      } else if (request.kind === 'one') {
        const full = await truth(id);
        const res = await harness.getOne('orders', id, { app });
        if (inScope(full, app.rowFilter)) checkRecord(app, res.body.data, full);
        else expectFailure(res, 2002);
      } else {
        const before = await truth(id);
        const res = await harness.update('orders', { id, status: request.status }, { app });
        const after = await truth(id);
        if (res.status === 200) {
          expect(inScope(before, app.rowFilter)).toBe(true);
          checkRecord(app, res.body.data, after);
        } else {
          // 1001 when status is outside the application's readFields: to it the field does not exist (§6).
          expect([1001, 2002, 1006]).toContain(res.body.errorCode);
          expect(after).toEqual(before);
        }
      }
    }),
    { numRuns: 60, seed: 99 },
  );
}, 120_000);
