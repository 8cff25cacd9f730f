/**
 * An index job that finishes folds the claims written while it scanned into its builds' per-value totals; when
 * that fold fails (here the store refuses the read it starts with), the job still finishes, the index answers its
 * exact totals (the lists fold the rest), and the failure is one structured warning line naming the job, the
 * dataset and the slots, not silence. Over HTTP, the index job driven page by page.
 */
import path from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { loadConfigFile } from '../../../../../shared/catalog-store/load-config';
import { setLogSink } from '../../../../../shared/observability/request-log';
import { claimsCheckedKey } from '../../../../../shared/storage/item-keys';
import { interceptSend } from '../../../../support/intercept-send';
import { LiveConfiguration } from '../../../../support/live-configuration';
import { FIXTURES_DIR } from '../../../../support/paths';

const FIXTURE = path.join(FIXTURES_DIR, 'live-configuration-config.json');
const CHECKED = JSON.stringify(claimsCheckedKey('orders'));

/** The client, refusing reads of the dataset's checked position (the first read of every fold). */
function refusingFolds(client: DynamoDBDocumentClient): DynamoDBDocumentClient {
  return interceptSend(client, (command, send) => {
    if (JSON.stringify(command.input.Key) === CHECKED) {
      return Promise.reject(Object.assign(new Error('the store is unavailable'), { name: 'ServiceUnavailable' }));
    }
    return send();
  });
}

const live = new LiveConfiguration(FIXTURE, { pageSize: 5, recordsPerSegment: 100, jobsClient: refusingFolds });

beforeAll(async () => {
  await live.start();
  for (let i = 0; i < 12; i++) {
    const created = await live.harness.create('orders', { customer: `c-${i}`, items: i % 3 });
    expect(created.body.success).toBe(true);
  }
}, 120_000);
afterAll(() => live.stop());

it('logs a warning naming the job, dataset and slots when the fold of a finishing index job fails', async () => {
  const next = structuredClone(loadConfigFile(FIXTURE));
  const items = next.datasets[0]?.fields.find((field) => field.name === 'items');
  if (!items) throw new Error('the fixture has an items field');
  items.indexed = true;
  await live.apply(next);
  // Written while the job scans: a claim its fold would fold.
  expect(await live.stepIndexJobs()).toBe(true);
  expect((await live.harness.create('orders', { customer: 'during', items: 2 })).body.success).toBe(true);

  const lines: Record<string, unknown>[] = [];
  const previous = setLogSink((line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  try {
    await live.runIndexJobs();
  } finally {
    setLogSink(previous);
  }
  const warnings = lines.filter((line) => line.level === 'WARN');
  expect(warnings).toEqual([
    {
      level: 'WARN',
      operation: 'value-fold',
      foldBy: 'index-job',
      jobId: expect.stringMatching(/^[0-9A-Z]{26}$/),
      datasetCode: 'orders',
      // The fifth index slot, its first build: `items`.
      slots: ['@ix5.b5:items'],
      error: 'ServiceUnavailable: the store is unavailable',
    },
  ]);

  const answer = await live.harness.getList('orders', { items: 2, pageSize: 20 });
  expect(answer.body.data.paging.totalCount).toBe(5);
}, 120_000);
