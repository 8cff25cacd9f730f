/**
 * Property: get-list with related fields (docs/interface.md §21), over HTTP, answers exactly what an in-memory join
 * of random orders and customers answers: a condition on a related field holds only where the caller may read the
 * related record (its row filter there included), a sort by one puts records without a readable related record
 * where nulls go, ties broken by id in the last key's direction, and a selected related field comes back nested or
 * `null`. Each run lists only its own orders (their items start with the run's tag), while the customers of earlier
 * runs stay in the store, so conditions that match many customers take the join in memory instead of the ids.
 * Run on the embedded setup (test/integration/shared/query/get-list/relations-property.test.ts) and on MySQL past
 * the read budget (test/integration/shared/mirror/relations-mysql-property.test.ts), with test/fixtures/relations-config.json.
 */
import fc from 'fast-check';
import { type AppCredentials, MAIN_APP, type ServiceHarness } from './service-harness';

const NARROW: AppCredentials = {
  appCode: 'app-narrow',
  accessKey: 'ak-narrow-application',
  secret: 'sk-narrow-secret-value',
};

type Customer = { name: string | null; region: 'north' | 'south' };
/** An order links to a customer of the run (by position), to nothing, or to an id no record has. */
type Link = number | null | 'dangling';
type Cond =
  | { field: 'name' | 'region'; op: 'eq'; value: string | null }
  | { field: 'name'; op: 'ne'; value: string }
  | { field: 'name'; op: 'in'; values: string[] }
  | { field: 'name'; op: 'startWith'; value: string };
type Sort = [field: 'customer.name' | 'customer.region' | 'amount', direction: 'asc' | 'desc'][];

const NAMES = ['Ada', 'Bob', 'Cy'];
const customer: fc.Arbitrary<Customer> = fc.record({
  name: fc.option(fc.constantFrom(...NAMES), { nil: null }),
  region: fc.constantFrom('north' as const, 'south' as const),
});
const condition: fc.Arbitrary<Cond> = fc.oneof(
  // Text matches ignore letter case: 'a' and 'A' both start 'Ada'.
  fc.record({
    field: fc.constant('name' as const),
    op: fc.constant('startWith' as const),
    value: fc.constantFrom('a', 'A', 'b', 'Cy', 'z'),
  }),
  fc.record({
    field: fc.constant('name' as const),
    op: fc.constant('eq' as const),
    value: fc.option(fc.constantFrom(...NAMES), { nil: null }),
  }),
  fc.record({
    field: fc.constant('region' as const),
    op: fc.constant('eq' as const),
    value: fc.constantFrom('north', 'south'),
  }),
  fc.record({ field: fc.constant('name' as const), op: fc.constant('ne' as const), value: fc.constantFrom(...NAMES) }),
  fc.record({
    field: fc.constant('name' as const),
    op: fc.constant('in' as const),
    values: fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 2 }),
  }),
);
const sortList: fc.Arbitrary<Sort> = fc.uniqueArray(
  fc.tuple(
    fc.constantFrom('customer.name' as const, 'customer.region' as const, 'amount' as const),
    fc.constantFrom('asc' as const, 'desc' as const),
  ),
  { maxLength: 2, selector: ([field]) => field },
);

function whereOf(cond: Cond): Record<string, unknown> {
  const key = `customer.${cond.field}`;
  if (cond.op === 'eq') return { [key]: cond.value };
  if (cond.op === 'ne') return { [key]: { $ne: cond.value } };
  if (cond.op === 'startWith') return { [key]: { $startWith: cond.value } };
  return { [key]: { $in: cond.values } };
}

function holds(cond: Cond, c: Customer): boolean {
  const value = c[cond.field];
  if (cond.op === 'eq') return value === cond.value;
  if (cond.op === 'ne') return value !== cond.value;
  if (cond.op === 'startWith') return value?.toLowerCase().startsWith(cond.value.toLowerCase()) === true;
  return value !== null && cond.values.includes(value);
}

/** Nulls first, then by value. */
function cmp(x: string | number | null, y: string | number | null): number {
  if (x === y) return 0;
  if (x === null) return -1;
  if (y === null) return 1;
  return x < y ? -1 : 1;
}

/**
 * The property as one test of the calling file, over its harness (`harness()`, started). `relatedOnly`: every
 * list names a related field in a condition or a sort.
 */
export function relationsProperty(
  harness: () => ServiceHarness,
  options: { numRuns: number; relatedOnly?: boolean; tag: string },
): void {
  let run = 0;
  it('answers as an in-memory join, filter and sort of the same records', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(customer, { maxLength: 4 }),
        fc.array(
          fc.record({
            amount: fc.option(fc.integer({ min: -2, max: 2 }), { nil: null }),
            link: fc.oneof(fc.nat({ max: 3 }), fc.constant(null), fc.constant('dangling' as const)),
          }),
          { maxLength: 7 },
        ),
        fc.option(condition, { nil: undefined }),
        fc.boolean(),
        sortList,
        fc.boolean(),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 3 }),
        async (customers, orderSpecs, cond, underOr, sort, narrow, pageSize, page) => {
          if (options.relatedOnly) fc.pre(cond !== undefined || sort.some(([field]) => field !== 'amount'));
          const tag = `${options.tag}${run++}-`;
          const customerIds: string[] = [];
          for (const c of customers) {
            const res = await harness().create('customers', { ...c, tier: 'gold', email: 'x@example.com' });
            customerIds.push(res.body.data.id);
          }
          const linkId = (link: Link): string | null => {
            if (link === null) return null;
            if (link === 'dangling') return '01DANGLINGCUSTOMER00000000';
            return customerIds[link] ?? null;
          };
          const orders: { id: string; item: string; amount: number | null; customer: Customer | undefined }[] = [];
          for (const [i, spec] of orderSpecs.entries()) {
            const item = `${tag}${i}`;
            const customerId = linkId(spec.link);
            const res = await harness().create('orders', { item, amount: spec.amount, customer_id: customerId });
            const linked = typeof spec.link === 'number' ? customers[spec.link] : undefined;
            orders.push({ id: res.body.data.id, item, amount: spec.amount, customer: linked });
          }

          // The oracle: what the caller may read of each order's customer, then filter, sort and page.
          const visible = (c: Customer | undefined) => (c && (!narrow || c.region === 'north') ? c : undefined);
          const sortValue = (order: (typeof orders)[number], field: Sort[number][0]) => {
            if (field === 'amount') return order.amount;
            const c = visible(order.customer);
            return c ? c[field === 'customer.name' ? 'name' : 'region'] : null;
          };
          const matches = (order: (typeof orders)[number]) => {
            if (!cond) return true;
            const c = visible(order.customer);
            const related = c !== undefined && holds(cond, c);
            return underOr ? related || (order.amount !== null && order.amount >= 2) : related;
          };
          const keys: Sort = sort.length ? sort : [];
          const lastDirection = keys.at(-1)?.[1] ?? 'desc';
          const expected = orders
            .filter(matches)
            .sort((p, q) => {
              for (const [field, direction] of keys) {
                const c = cmp(sortValue(p, field), sortValue(q, field));
                if (c !== 0) return direction === 'asc' ? c : -c;
              }
              // No sort: newest first (creation order), the id breaking ties in the last key's direction.
              const c = cmp(p.id, q.id);
              return lastDirection === 'asc' ? c : -c;
            })
            .map((order) => {
              const c = visible(order.customer);
              return { item: order.item, customer: c ? { name: c.name } : null };
            });

          const related = cond ? whereOf(cond) : {};
          const where = underOr && cond ? { $or: [related, { amount: { $gte: 2 } }] } : related;
          const res = await harness().getList(
            'orders',
            {
              select: ['item', 'customer.name'],
              where: { $and: [{ item: { $startWith: tag } }, where] },
              orderBy: sort.map(([field, direction]) => ({ [field]: direction })),
              page,
              pageSize,
            },
            { app: narrow ? NARROW : MAIN_APP },
          );
          expect(res.body).toMatchObject({ success: true });
          expect(res.body.data.paging.totalCount).toBe(expected.length);
          expect(res.body.data.tableData.map(({ id: _id, ...row }: { id: string }) => row)).toEqual(
            expected.slice((page - 1) * pageSize, page * pageSize),
          );
        },
      ),
      { numRuns: options.numRuns },
    );
  }, 180_000);
}
