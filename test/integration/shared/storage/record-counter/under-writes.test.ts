/**
 * get-list totals while records are being created, over HTTP against the real pipeline: every total lies between
 * the creates answered before the list was sent and the creates sent before it was answered, the total after
 * the writes is exact, and the read cost of a page does not grow with the number of recent creates.
 */
import { ServiceHarness } from '../../../../support/service-harness';

let service: ServiceHarness;

beforeAll(async () => {
  service = await new ServiceHarness().start();
});
afterAll(() => service.stop());

function readUnitsOfLastList(): number {
  const line = service.logLines.filter((l) => l.operation === 'get-list').at(-1);
  return Number(line?.readUnits);
}

it('keeps every total between the creates answered and the creates sent, and exact afterwards', async () => {
  const before = await service.getList('notes', { pageSize: 5 });
  expect(before.body.success).toBe(true);
  const base = before.body.data.paging.totalCount as number;
  let sent = 0;
  let answered = 0;
  const observations: { low: number; high: number; total: number }[] = [];
  // Eight writers of eight creates each and two readers listing while they write: within the concurrency limit.
  const writers = Array.from({ length: 8 }, async (_, w) => {
    for (let i = 0; i < 8; i++) {
      sent += 1;
      const created = await service.create('notes', { title: `concurrent ${w}-${i}` });
      expect(created.body).toMatchObject({ success: true });
      answered += 1;
    }
  });
  const readers = Array.from({ length: 2 }, async () => {
    while (answered < 64) {
      const low = answered;
      const page = await service.getList('notes', { pageSize: 5 });
      const high = sent;
      expect(page.body).toMatchObject({ success: true });
      observations.push({ low, high, total: page.body.data.paging.totalCount - base });
    }
  });
  await Promise.all([...writers, ...readers]);
  expect(observations.length).toBeGreaterThan(2);
  for (const { low, high, total } of observations) {
    expect(total).toBeGreaterThanOrEqual(low);
    expect(total).toBeLessThanOrEqual(high);
  }
  const after = await service.getList('notes', { pageSize: 5 });
  expect(after.body.data.paging.totalCount).toBe(base + 64);
  // Sixty-four fresh records in the tail: the checkpoint (0.5), their entries in the count index (0.5) and a page of
  // five small records (0.5). Reading the sixty records themselves would cost several units more.
  expect(readUnitsOfLastList()).toBe(1.5);
});
