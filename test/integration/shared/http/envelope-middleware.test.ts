/**
 * docs/interface.md §7 size limits over HTTP: a response larger than the platform's payload limit is refused with a
 * 1001 that tells the caller what to ask for instead, never cut short.
 */
import { expectFailure } from '../../../support/failure-envelope';
import { ServiceHarness } from '../../../support/service-harness';

const harness = new ServiceHarness();
const RECORDS = 100;
const BODY_CHARS = 70_000; // 100 records of 70 KB: about 7 MB in one page of 100

beforeAll(async () => {
  await harness.start();
  const body = 'b'.repeat(BODY_CHARS);
  for (let k = 0; k < RECORDS; k += 5) {
    const batch = Array.from({ length: 5 }, (_, j) => harness.create('notes', { title: `big ${k + j}`, body }));
    for (const res of await Promise.all(batch)) expect(res.status).toBe(200);
  }
});
afterAll(() => harness.stop());

describe('a response over the payload limit', () => {
  it('is refused with 1001 telling the caller to ask for fewer records or fields', async () => {
    const res = await harness.getList('notes', { pageSize: 100 });
    expectFailure(
      res,
      1001,
      'the response would exceed the 6 MB payload limit; ask for fewer records (pageSize) or fewer fields (select)',
    );
    // The caller is authenticated: the refusal still says where its quota stands.
    expect(res.headers.get('ratelimit-limit')).toBe('600');
  });

  it('is answered in full when the caller asks for fewer records', async () => {
    const res = await harness.getList('notes', { pageSize: 50 });
    expect(res.status).toBe(200);
    expect(res.body.data.tableData).toHaveLength(50);
    expect(res.body.data.tableData.every((r: { body: string }) => r.body.length === BODY_CHARS)).toBe(true);
  });
});
