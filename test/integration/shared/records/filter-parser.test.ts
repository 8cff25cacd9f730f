/**
 * docs/interface.md §7 on filters: `where` holds at most 100 conditions, and a filter the store could not evaluate is
 * 1001 before anything is read. Shapes that used to reach the store and fail there (a one-element `$or`, a
 * condition on `id` beside an unindexed one, numbers next to DynamoDB's bound) answer what they mean.
 */
import path from 'node:path';
import { failureWith } from '../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../support/paths';
import { ServiceHarness } from '../../../support/service-harness';

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'list-config.json'));
const ids: string[] = [];

beforeAll(async () => {
  await harness.start();
  for (const [name, num] of [
    ['a', 1],
    ['b', 2],
    ['c', 3],
  ] as const) {
    ids.push((await harness.create('plain', { label_x: name, num })).body.data.id);
  }
});
afterAll(() => harness.stop());

const labels = (res: Awaited<ReturnType<typeof harness.getList>>) =>
  res.body.data.tableData.map((r: { label_x: string }) => r.label_x).sort();

describe('well-formed filters that used to fail in the store', () => {
  it('answers a one-element $or and $and, nested, as the condition they hold', async () => {
    const res = await harness.getList('plain', { where: { $or: [{ $and: [{ $or: [{ num: { $gte: 2 } }] }] }] } });
    expect(res.status).toBe(200);
    expect(labels(res)).toEqual(['b', 'c']);
  });

  it('answers conditions on id read from the partition (id is the sort key, which a filter may not name)', async () => {
    const res = await harness.getList('plain', {
      id_is_null: false,
      where: { $or: [{ id: ids[0] }, { num: 3 }], label_x: { $ne: 'x' } },
    });
    expect(res.status).toBe(200);
    expect(labels(res)).toEqual(['a', 'c']);
    const none = await harness.getList('plain', { id_is_null: true, label_x_like: 'a' });
    expect(none.body.data.paging.totalCount).toBe(0);
  });

  it('stores the largest number DynamoDB accepts and refuses 1e126 with 1001', async () => {
    const largest = await harness.create('plain', { num: 9.999999999999998e125 });
    expect(largest.body.data.num).toBe(9.999999999999998e125);
    const over = await harness.create('plain', { num: 9.999999999999999e125 });
    expect(over.body).toEqual({
      ...failureWith(1001),
      errorMsg: "field 'num' expects a number (magnitude must be between 1e-130 and 1e126)",
    });
  });
});

describe('limits', () => {
  const conditions = (n: number) => Array.from({ length: n }, (_, k) => ({ num: { $ne: k + 1000 } }));

  it('accepts 100 conditions in where', async () => {
    const bounds = Array.from({ length: 100 }, (_, k) => ({ num: { $gt: -k } }));
    const res = await harness.getList('plain', { where: { $and: bounds }, label_x_like: 'a' });
    expect(res.status).toBe(200);
    expect(labels(res)).toEqual(['a']);
  });

  it('refuses 100 conditions that need more than 300 operators in one expression with 1001', async () => {
    // Each $ne is three operators (a null differs from every value): 300, plus the 99 ANDs between them.
    const res = await harness.getList('plain', { where: { $and: conditions(100) } });
    expect(res.body).toEqual({
      ...failureWith(1001),
      errorMsg:
        'the filters are too complex for the store to evaluate in one read; use fewer conditions or fewer values in $in and _in',
    });
  });

  it('refuses 101 conditions, and 1,000, with 1001', async () => {
    for (const n of [101, 1000]) {
      const res = await harness.getList('plain', { where: { $or: conditions(n) } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ ...failureWith(1001), errorMsg: 'where: holds more than 100 conditions' });
    }
  });

  it('refuses a filter too large for one DynamoDB expression with 1001, before reading anything', async () => {
    const values = Array.from({ length: 100 }, (_, k) => `value-${k}`);
    const res = await harness.getList('plain', {
      where: { $or: Array.from({ length: 20 }, () => ({ label_x: { $in: values } })) },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      ...failureWith(1001),
      errorMsg:
        'the filters are too complex for the store to evaluate in one read; use fewer conditions or fewer values in $in and _in',
    });
    expect(harness.logLines.at(-1)).toMatchObject({ errorCode: 1001, readUnits: 0 });
  });
});
