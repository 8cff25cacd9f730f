/**
 * The read budget of get-list (2001): a read that no index narrows stops when it would spend more than the
 * configured units, and the message names the field to index. Indexed reads of the same data stay under it.
 */
import path from 'node:path';
import { expectFailure, failureWith } from '../../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../../support/paths';
import { type AppCredentials, ServiceHarness } from '../../../../support/service-harness';

// Read once, when the first request builds the container's ports: this file's server has a tiny budget.
process.env.LIST_READ_BUDGET = '2';
const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'list-config.json'));

beforeAll(async () => {
  await harness.start();
  const body = 'x'.repeat(3000);
  for (let i = 0; i < 40; i++) {
    await harness.create('plain', { num: i, body, kind: 'a' });
    await harness.create('items', { name: `item-${i}`, qty: i % 4, note: body });
  }
});
afterAll(async () => {
  await harness.stop();
  delete process.env.LIST_READ_BUDGET;
});

describe('2001 when an unindexed read exceeds the budget', () => {
  it.each([
    ['an unindexed _like', 'plain', { body_like: 'y' }, "no index serves 'body'"],
    ['an unindexed equality', 'plain', { num: 3 }, "no index serves 'num'"],
    ['a sort on an unindexed field', 'plain', { ytSortList: [{ num: 'asc' }] }, "no index serves 'num'"],
    ['an indexed filter with an unindexed residual', 'items', { qty_is_null: false, note_like: 'y' }, "'note'"],
    // Every match must be read to sort them: the message names the sort's field.
    [
      'an indexed filter sorted by an unindexed field',
      'items',
      { qty: 1, ytSortList: [{ region: 'asc' }] },
      "'region'",
    ],
  ])('%s', async (_label, dataset, paramMap, fragment) => {
    const res = await harness.getList(dataset, paramMap);
    expectFailure(res, 2001);
    expect(res.body.errorMsg).toContain('would read more than 2 capacity units');
    expect(res.body.errorMsg).toContain(fragment);
    expect(res.body.errorMsg).toContain('indexed');
  });
});

describe('2001 under a row filter', () => {
  // app-scoped reads items through the row filter {"region": "EU"}; region has no index.
  const SCOPED: AppCredentials = {
    appCode: 'app-scoped',
    accessKey: 'ak-scoped-current-01',
    secret: 'sk-scoped-secret-value',
  };

  it('never names the row filter field, which the caller did not send (docs/interface.md §6)', async () => {
    const res = await harness.getList('items', {}, { app: SCOPED });
    expect(res.status).toBe(504);
    expect(res.body).toEqual({
      ...failureWith(2001),
      errorMsg: 'the query would read more than 2 capacity units; add a narrower condition on an indexed field',
    });
  });

  it('still names an unindexed field of the caller own filter, and only that one', async () => {
    const res = await harness.getList('items', { name_like: 'item' }, { app: SCOPED });
    expect(res.status).toBe(504);
    expect(res.body.errorMsg).toBe(
      "the query would read more than 2 capacity units; no index serves 'name': mark it as indexed in the dataset, or add a condition on an indexed field",
    );
  });
});

describe('within the budget', () => {
  it('pages an indexed filter sorted by another indexed field from the sort field index, reading only the page', async () => {
    // qty 1 holds item-1, item-5, ..., item-37: reading those ten items (3 KB each) to sort them would cost 5
    // units, past the budget of 2; their keys, the name index in order and the page's three items cost less.
    const page = async (currentPage: number) =>
      (await harness.getList('items', { qty: 1, ytSortList: [{ name: 'desc' }], pageSize: 3, currentPage })).body;
    const names = (body: { data: { tableData: { name: string }[] } }) => body.data.tableData.map((r) => r.name);
    const [first, second, last, past] = [await page(1), await page(2), await page(4), await page(5)];
    expect([first, second, last, past].map((body) => body.data?.paging.totalCount)).toEqual([10, 10, 10, 10]);
    expect([first, second, last, past].map(names)).toEqual([
      ['item-9', 'item-5', 'item-37'],
      ['item-33', 'item-29', 'item-25'],
      ['item-1'],
      [],
    ]);
  });

  it('answers indexed filters and sorts over the same records', async () => {
    const eq = await harness.getList('items', { qty: 1 });
    expect(eq.body.data.paging.totalCount).toBe(10);
    const sorted = await harness.getList('items', { ytSortList: [{ qty: 'desc' }], pageSize: 3 });
    expect(sorted.body.data.tableData.map((r: { qty: number }) => r.qty)).toEqual([3, 3, 3]);
    const unfiltered = await harness.getList('plain', { pageSize: 2 });
    expect(unfiltered.body.data.paging.totalCount).toBe(40);
  });
});
