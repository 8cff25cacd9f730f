/** docs/interface.md §5 basics over HTTP: paging, exact totals, newest first, columns, pageSize rules. */
import { expectFailure } from '../../../../support/failure-envelope';
import { ServiceHarness } from '../../../../support/service-harness';

const harness = new ServiceHarness();
const ids: string[] = [];

beforeAll(async () => {
  await harness.start();
  for (let k = 1; k <= 25; k += 1) {
    const res = await harness.create('notes', { title: `note ${k}`, f1: k });
    ids.push(res.body.data.id);
  }
});
afterAll(() => harness.stop());

const newestFirst = () => [...ids].reverse();

describe('get-list paging', () => {
  it('answers the first page of 20, newest first, with the exact total', async () => {
    const res = await harness.getList('notes');
    expect(res.status).toBe(200);
    expect(res.body.data.paging).toEqual({ pageSize: 20, totalCount: 25, currentPage: 1 });
    expect(res.body.data.tableData.map((r: { id: string }) => r.id)).toEqual(newestFirst().slice(0, 20));
    expect(res.body.data.tableData[0]).toMatchObject({ title: 'note 25', f1: 25 });
  });

  it('answers the rest on page 2', async () => {
    const res = await harness.getList('notes', { currentPage: 2 });
    expect(res.body.data.paging).toEqual({ pageSize: 20, totalCount: 25, currentPage: 2 });
    expect(res.body.data.tableData.map((r: { id: string }) => r.id)).toEqual(newestFirst().slice(20));
  });

  it('pages through everything exactly once with a small page size', async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 9; page += 1) {
      const res = await harness.getList('notes', { currentPage: page, pageSize: 3 });
      seen.push(...res.body.data.tableData.map((r: { id: string }) => r.id));
    }
    expect(seen).toEqual(newestFirst());
  });

  it('answers an empty page past the end with the true total', async () => {
    const res = await harness.getList('notes', { currentPage: 50, pageSize: 10 });
    expect(res.body.data.paging).toEqual({ pageSize: 10, totalCount: 25, currentPage: 50 });
    expect(res.body.data.tableData).toEqual([]);
  });

  it('serves a pageSize above 100 as 100 and says so', async () => {
    const res = await harness.getList('notes', { pageSize: 500 });
    expect(res.body.data.paging).toEqual({ pageSize: 100, totalCount: 25, currentPage: 1 });
    expect(res.body.data.tableData).toHaveLength(25);
  });

  it('accepts paging given as numeric strings', async () => {
    const res = await harness.getList('notes', { currentPage: '2', pageSize: '10' });
    expect(res.body.data.paging).toEqual({ pageSize: 10, totalCount: 25, currentPage: 2 });
  });

  it.each([
    [{ pageSize: 0 }, 'pageSize must be an integer of at least 1'],
    [{ pageSize: 2.5 }, 'pageSize must be an integer of at least 1'],
    [{ pageSize: 'ten' }, 'pageSize must be an integer of at least 1'],
    [{ currentPage: 0 }, 'currentPage must be an integer of at least 1'],
    [{ currentPage: -1 }, 'currentPage must be an integer of at least 1'],
  ])('refuses %j with 1001', async (paramMap, message) => {
    const res = await harness.getList('notes', paramMap);
    expectFailure(res, 1001, message);
  });

  it('treats a missing paramMap as an empty one', async () => {
    const res = await harness.call('/openapi/data/get-list', { datasetCode: 'notes' });
    expect(res.body.data.paging).toEqual({ pageSize: 20, totalCount: 25, currentPage: 1 });
  });
});

describe('tableColumns', () => {
  it('lists id, the fields in definition order with their titles, then the timestamps', async () => {
    const res = await harness.getList('typed', { pageSize: 1 });
    expect(res.body.data.tableColumns).toEqual([
      { title: 'id', dataIndex: 'id' },
      { title: 'String', dataIndex: 's' },
      { title: 't', dataIndex: 't' },
      { title: 'i', dataIndex: 'i' },
      { title: 'n', dataIndex: 'n' },
      { title: 'b', dataIndex: 'b' },
      { title: 'd', dataIndex: 'd' },
      { title: 'dt', dataIndex: 'dt' },
      { title: 'e', dataIndex: 'e' },
      { title: 'j', dataIndex: 'j' },
      { title: 'gmt_create', dataIndex: 'gmt_create' },
      { title: 'gmt_modified', dataIndex: 'gmt_modified' },
    ]);
  });
});
