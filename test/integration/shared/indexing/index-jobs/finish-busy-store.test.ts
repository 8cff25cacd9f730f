/**
 * An index job that finishes deletes its own items (definition, progress, segments) in batches; when the store
 * keeps leaving those deletes unprocessed, the job still finishes, the new index answers, and the items left
 * behind (referenced by nothing) are one structured warning line naming the job, not a failed step. Over HTTP,
 * the index job driven page by page.
 */
import path from 'node:path';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { loadConfigFile } from '../../../../../shared/catalog-store/load-config';
import { setLogSink } from '../../../../../shared/observability/request-log';
import { interceptSend } from '../../../../support/intercept-send';
import { LiveConfiguration } from '../../../../support/live-configuration';
import { FIXTURES_DIR } from '../../../../support/paths';

const FIXTURE = path.join(FIXTURES_DIR, 'live-configuration-config.json');

/** BatchWriteItem calls the jobs make, each answered with every request left unprocessed. */
let batchWrites = 0;

/** The client, answering every BatchWriteItem as a saturated table does: nothing processed. */
function busyBatchWrites(client: DynamoDBDocumentClient): DynamoDBDocumentClient {
  return interceptSend(client, (command, send) => {
    if (command instanceof BatchWriteCommand) {
      batchWrites += 1;
      return Promise.resolve({ UnprocessedItems: command.input.RequestItems });
    }
    return send();
  });
}

const live = new LiveConfiguration(FIXTURE, { pageSize: 5, recordsPerSegment: 100, jobsClient: busyBatchWrites });

beforeAll(async () => {
  await live.start();
  for (let i = 0; i < 12; i++) {
    const created = await live.harness.create('orders', { customer: `c-${i}`, items: i % 3 });
    expect(created.body.success).toBe(true);
  }
}, 120_000);
afterAll(() => live.stop());

it('finishes a job whose items the store will not delete, and logs the items left', async () => {
  const next = structuredClone(loadConfigFile(FIXTURE));
  const items = next.datasets[0]?.fields.find((field) => field.name === 'items');
  if (!items) throw new Error('the fixture has an items field');
  items.indexed = true;
  await live.apply(next);

  const lines: Record<string, unknown>[] = [];
  const previous = setLogSink((line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  try {
    await live.runIndexJobs();
  } finally {
    setLogSink(previous);
  }
  // One batch of the job's few items, sent six times, then given up.
  expect(batchWrites).toBe(6);
  expect(lines.filter((line) => line.level === 'WARN')).toEqual([
    {
      level: 'WARN',
      operation: 'index-job',
      jobId: expect.stringMatching(/^[0-9A-Z]{26}$/),
      jobItemsLeft: true,
      error: 'BatchIncomplete: the data store is busy and could not keep up with this request; retry in a few seconds',
    },
  ]);

  const answer = await live.harness.getList('orders', { items: 2, pageSize: 20 });
  expect(answer.status).toBe(200);
  expect(answer.body.data.paging.totalCount).toBe(4);
  expect(answer.body.data.tableData.map((record: { customer: string }) => record.customer).sort()).toEqual([
    'c-11',
    'c-2',
    'c-5',
    'c-8',
  ]);
}, 120_000);
