/**
 * The aggregate property (docs/interface.md §21), run on both SQL engines (test/integration/shared/operations/aggregate
 * on the embedded one, test/integration/shared/mirror on MySQL): a random aggregate request of an application whose
 * grant hides a field (`cost`) and reaches one region only answers exactly what an in-memory oracle computes from
 * the records that application may read: the same groups, measures, order, page and group count. Requests that name
 * the hidden field anywhere (a measure, groupBy, where, having, orderBy) are 1001 as an unknown field, and
 * conditions on rows outside the grant (another region) reach nothing. The oracle is written here, independently of
 * the service.
 *
 * Values are chosen where MySQL 8's semantics and plain comparison agree (lower-case enum values, amounts in halves),
 * so the oracle needs no collation; text matched by `$contain` is compared ignoring case, as MySQL 8 compares it.
 */
import fc from 'fast-check';
import type { AppCredentials, ServiceHarness } from './service-harness';

export const NARROW: AppCredentials = {
  appCode: 'app-narrow',
  accessKey: 'ak-narrow-application',
  secret: 'sk-narrow-secret-value',
};

type Status = 'new' | 'paid' | 'void';
interface Order {
  customer: string;
  status: Status | null;
  region: 'north' | 'south';
  amount: number | null;
  qty: number | null;
  cost: number;
}

/** 40 records from a fixed sequence: nulls, ties and both regions. */
export const ORDERS: Order[] = Array.from({ length: 40 }, (_, i) => ({
  customer: ['Ada', 'bob', 'Cy', 'dee', 'Eve'][i % 5] as string,
  status: (['new', 'paid', 'void', null, 'paid', 'new', 'paid'] as const)[i % 7] ?? null,
  region: i % 3 === 0 ? 'south' : 'north',
  amount: i % 6 === 5 ? null : ((i * 37) % 23) * 0.5,
  qty: i % 8 === 3 ? null : (i * 7) % 5,
  cost: i * 11,
}));
/** What the narrow application may read: its row filter is `region: north`. */
const VISIBLE = ORDERS.filter((order) => order.region === 'north');

type Value = string | number | null;
type Column = 'customer' | 'status' | 'region' | 'amount' | 'qty';
interface MeasureSpec {
  type: 'SUM' | 'AVG' | 'COUNT' | 'MAX' | 'MIN';
  column?: Column;
  distinct?: boolean;
}
interface Condition {
  wire: Record<string, unknown>;
  test: (order: Order) => boolean;
}

const MEASURES: MeasureSpec[] = [
  { type: 'COUNT' },
  { type: 'COUNT', column: 'qty' },
  { type: 'COUNT', column: 'status', distinct: true },
  { type: 'SUM', column: 'qty' },
  { type: 'SUM', column: 'amount' },
  { type: 'AVG', column: 'qty' },
  { type: 'AVG', column: 'amount' },
  { type: 'MAX', column: 'amount' },
  { type: 'MIN', column: 'qty' },
  { type: 'MAX', column: 'status' },
];

const condition: fc.Arbitrary<Condition> = fc.oneof(
  fc.subarray(['new', 'paid', 'void'], { minLength: 1 }).map((values) => ({
    wire: { status: { $in: values } },
    test: (o: Order) => o.status !== null && values.includes(o.status),
  })),
  fc.integer({ min: 0, max: 11 }).map((x) => ({
    wire: { amount: { $gteq: x } },
    test: (o: Order) => o.amount !== null && o.amount >= x,
  })),
  fc.integer({ min: 0, max: 5 }).map((x) => ({
    wire: { qty: { $lt: x } },
    test: (o: Order) => o.qty !== null && o.qty < x,
  })),
  fc.integer({ min: 0, max: 5 }).map((x) => ({
    wire: { qty: { $lteq: x } },
    test: (o: Order) => o.qty !== null && o.qty <= x,
  })),
  fc.constant({ wire: { qty: { $notNull: true } }, test: (o: Order) => o.qty !== null }),
  fc.constant({ wire: { status: { $ne: 'paid' } }, test: (o: Order) => o.status !== 'paid' }),
  fc.constantFrom('a', 'E', 'y').map((text) => ({
    wire: { customer: { $contain: text } },
    test: (o: Order) => o.customer.toLowerCase().includes(text.toLowerCase()),
  })),
  // Rows outside the grant: nothing the caller may read matches.
  fc.constant({ wire: { region: 'south' }, test: (o: Order) => o.region === 'south' }),
);

const where: fc.Arbitrary<Condition | undefined> = fc.option(
  fc.oneof(
    condition,
    fc.tuple(condition, condition, fc.boolean()).map(([a, b, or]) => ({
      wire: { [or ? '$or' : '$and']: [a.wire, b.wire] },
      test: (o: Order) => (or ? a.test(o) || b.test(o) : a.test(o) && b.test(o)),
    })),
  ),
  { nil: undefined },
);

const request = fc.record({
  measures: fc.subarray(MEASURES, { minLength: 1, maxLength: 3 }),
  groupBy: fc.subarray(['status', 'qty', 'region'] as Column[], { maxLength: 2 }),
  where,
  having: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
  order: fc.array(fc.tuple(fc.nat(4), fc.constantFrom('asc', 'DESC', 'Asc', 'desc')), { maxLength: 2 }),
  pageSize: fc.integer({ min: 1, max: 4 }),
  currentPage: fc.integer({ min: 1, max: 3 }),
  // The first measure may be given a hidden field's name as its alias: an output name, which reaches nothing.
  aliasCost: fc.boolean(),
});
type Request = typeof request extends fc.Arbitrary<infer R> ? R : never;

const aliasOf = (r: Request, i: number) => (i === 0 && r.aliasCost ? 'cost' : `m${i}`);

/** `having` on the first measure when its values are numbers (MAX of status is text). */
const havingOf = (r: Request) =>
  r.measures[0]?.column === 'status' && r.measures[0].type === 'MAX' ? undefined : r.having;

function wire(r: Request): Record<string, unknown> {
  const names = [...r.groupBy, ...r.measures.map((_, i) => aliasOf(r, i))];
  const orderBy: Record<string, string>[] = [];
  for (const [pick, direction] of r.order) {
    const name = names[pick % names.length] as string;
    if (!orderBy.some((entry) => name in entry)) orderBy.push({ [name]: direction });
  }
  return {
    aggregate: r.measures.map((m, i) => ({ ...m, alias: aliasOf(r, i) })),
    ...(r.groupBy.length > 0 ? { groupBy: r.groupBy } : {}),
    ...(r.where ? { where: r.where.wire } : {}),
    ...(havingOf(r) === undefined ? {} : { having: { [aliasOf(r, 0)]: { $gte: r.having } } }),
    ...(orderBy.length > 0 ? { orderBy } : {}),
    pageSize: r.pageSize,
    currentPage: r.currentPage,
  };
}

function measure(spec: MeasureSpec, orders: Order[]): Value {
  if (!spec.column) return orders.length;
  const values = orders.map((o) => o[spec.column as Column]).filter((v): v is string | number => v !== null);
  if (spec.type === 'COUNT') return spec.distinct ? new Set(values).size : values.length;
  if (values.length === 0) return null;
  if (spec.type === 'MAX' || spec.type === 'MIN') {
    const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return (spec.type === 'MAX' ? sorted.at(-1) : sorted[0]) as Value;
  }
  const sum = (values as number[]).reduce((a, b) => a + b, 0);
  if (spec.type === 'SUM') return sum;
  // AVG of an integer field is MySQL's exact decimal, four decimals; of a number field a double.
  return spec.column === 'qty' ? Math.round((sum * 10_000) / values.length) / 10_000 : sum / values.length;
}

function compare(a: Value, b: Value): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}

function oracle(r: Request, body: Record<string, unknown>) {
  const rows = VISIBLE.filter((o) => !r.where || r.where.test(o));
  const groups = new Map<string, Order[]>();
  for (const o of rows) {
    const key = JSON.stringify(r.groupBy.map((f) => o[f]));
    groups.set(key, [...(groups.get(key) ?? []), o]);
  }
  // Without groupBy every record is one group, even when none is left.
  if (r.groupBy.length === 0 && groups.size === 0) groups.set('[]', []);
  let answers = [...groups.values()].map((members) => {
    const row: Record<string, Value> = {};
    for (const f of r.groupBy) row[f] = (members[0] as Order)[f];
    r.measures.forEach((m, i) => {
      row[aliasOf(r, i)] = measure(m, members);
    });
    return row;
  });
  const having = havingOf(r);
  if (having !== undefined) {
    const alias = aliasOf(r, 0);
    answers = answers.filter((row) => row[alias] !== null && (row[alias] as number) >= having);
  }
  const keys = ((body.orderBy ?? []) as Record<string, string>[]).map((entry) => {
    const [name, direction] = Object.entries(entry)[0] as [string, string];
    return { name, desc: direction.toLowerCase() === 'desc' };
  });
  for (const f of r.groupBy) if (!keys.some((k) => k.name === f)) keys.push({ name: f, desc: false });
  answers.sort((a, b) => {
    for (const key of keys) {
      const c = compare(a[key.name] ?? null, b[key.name] ?? null);
      if (c !== 0) return key.desc ? -c : c;
    }
    return 0;
  });
  const start = (r.currentPage - 1) * r.pageSize;
  return {
    tableData: answers.slice(start, start + r.pageSize),
    paging: { currentPage: r.currentPage, pageSize: r.pageSize, totalCount: answers.length },
  };
}

function aggregate(harness: ServiceHarness, paramMap: Record<string, unknown>) {
  return harness.call('/openapi/data/aggregate', { datasetCode: 'orders', paramMap }, { app: NARROW });
}

/** Where a request can name a field, each with the hidden field put there. */
const HIDDEN_PLACES: [string, (body: Record<string, unknown>) => Record<string, unknown>, RegExp][] = [
  [
    'a measure',
    (b) => ({ ...b, aggregate: [{ type: 'SUM', column: 'cost' }] }),
    /^aggregate\[0\]\.column: unknown field 'cost'/,
  ],
  [
    'a measure by its old name',
    (b) => ({ ...b, aggregate: [{ type: 'MAX', field: 'cost' }] }),
    /^aggregate\[0\]\.field: unknown field 'cost'/,
  ],
  ['groupBy', (b) => ({ ...b, groupBy: ['cost'] }), /^groupBy\[0\]: unknown field 'cost'/],
  ['where', (b) => ({ ...b, where: { cost: { $gt: 0 } } }), /^where\.cost: unknown field 'cost'/],
  ['a filter', (b) => ({ ...b, cost_start: 1 }), /^cost_start: unknown field or filter/],
  [
    'having',
    (b) => ({ ...b, having: { cost: { $gt: 0 } }, orderBy: undefined, aggregate: [{ type: 'COUNT', alias: 'n' }] }),
    /^having\.cost: unknown name 'cost'/,
  ],
  [
    'orderBy',
    (b) => ({ ...b, orderBy: [{ cost: 'asc' }], having: undefined, aggregate: [{ type: 'COUNT', alias: 'n' }] }),
    /^orderBy\[0\]\.cost: unknown name 'cost'/,
  ],
];

/**
 * The two properties, over the records of ORDERS stored in `orders` of the sdk-calls-config fixture by the caller;
 * `harness` is the running server, on either SQL engine.
 */
export function aggregateProperties(harness: () => ServiceHarness, numRuns: number): void {
  it('answers what the oracle computes from the records the caller may read', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const body = wire(r);
        const res = await aggregate(harness(), body);
        expect(res.body.success).toBe(true);
        const { tableData, paging } = res.body.data;
        expect({ tableData, paging }).toEqual(oracle(r, body));
      }),
      { numRuns },
    );
  }, 240_000);

  it('answers the hidden field wherever it is named as an unknown field, naming nothing hidden', async () => {
    await fc.assert(
      fc.asyncProperty(request, fc.constantFrom(...HIDDEN_PLACES), async (r, [, put, message]) => {
        const res = await aggregate(harness(), put(wire(r)));
        expect({ status: res.status, code: res.body.errorCode }).toEqual({ status: 400, code: 1001 });
        expect(res.body.errorMsg).toMatch(message);
        // A hint names only what the caller may read.
        expect(res.body.errorMsg).not.toMatch(/did you mean 'cost'|Cost/);
      }),
      { numRuns: Math.ceil(numRuns / 2) },
    );
  }, 240_000);
}

/**
 * Text as MySQL 8 compares it (docs/interface.md §21), over ORDERS: letter case is ignored in `=`, `IN`, ranges,
 * `groupBy` and `orderBy` (by code point `bob` would follow `Eve`, and `dee` would lie above `E`).
 */
export function aggregateTextCases(harness: () => ServiceHarness): void {
  const byCustomer = async (extra: Record<string, unknown>) => {
    const res = await aggregate(harness(), {
      aggregate: [{ type: 'COUNT', alias: 'n' }],
      groupBy: ['customer'],
      orderBy: [{ customer: 'asc' }],
      ...extra,
    });
    expect(res.body.success).toBe(true);
    return res.body.data.tableData;
  };

  it('compares text ignoring letter case in =, IN, ranges, groupBy and orderBy', async () => {
    expect(await byCustomer({})).toEqual([
      { customer: 'Ada', n: 5 },
      { customer: 'bob', n: 5 },
      { customer: 'Cy', n: 6 },
      { customer: 'dee', n: 5 },
      { customer: 'Eve', n: 5 },
    ]);
    expect(await byCustomer({ where: { customer: 'ADA' } })).toEqual([{ customer: 'Ada', n: 5 }]);
    expect(await byCustomer({ where: { customer: { $in: ['BOB', 'cy'] } } })).toEqual([
      { customer: 'bob', n: 5 },
      { customer: 'Cy', n: 6 },
    ]);
    expect(await byCustomer({ where: { customer: { $gte: 'C', $lt: 'E' } } })).toEqual([
      { customer: 'Cy', n: 6 },
      { customer: 'dee', n: 5 },
    ]);
  });
}
