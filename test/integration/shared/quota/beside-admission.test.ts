/**
 * Where the quota sits on a request's critical path (docs/performance.md, "The quota under production traffic"), seen from
 * the container's own DynamoDB client: every call the service sends is recorded as it leaves and as its answer
 * comes back. Reads start their first store call beside the admission's write; writes admit before they write;
 * nothing is sent after the operation (the slot stays with its environment and lapses on its own).
 */
import path from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoClient, dynamoDocumentClient } from '../../../../shared/aws/dynamodb';
import { createHandler } from '../../../../shared/composition/pipeline';
import type { Operation } from '../../../../shared/operation/operation';
import { createOperation } from '../../../../shared/operations/create';
import { getListOperation } from '../../../../shared/operations/get-list-operation';
import { getOneOperation } from '../../../../shared/operations/get-one';
import { expectFailure } from '../../../support/failure-envelope';
import { FIXTURES_DIR } from '../../../support/paths';
import type { AppCredentials } from '../../../support/service-harness';
import { ServiceHarness } from '../../../support/service-harness';

const QUOTA_CONFIG = path.join(FIXTURES_DIR, 'quota-config.json');
// The handlers are built in this process, also when the suite runs against the synthesized bundles: what is
// watched is this container's DynamoDB client, which a bundle would carry a copy of.
const OPERATIONS: Record<string, Operation> = {
  'get-one': getOneOperation,
  'get-list': getListOperation,
  create: createOperation,
};
const harness = new ServiceHarness(QUOTA_CONFIG, {
  loadHandler: async (file) => {
    const operation = OPERATIONS[file];
    return operation ? createHandler(operation) : undefined;
  },
});

function app(appCode: string): AppCredentials {
  return { appCode, accessKey: `ak-${appCode}-0001`, secret: 'quota-fixture-default-secret' };
}

/** `send Quota.UpdateItem`, `done Records.GetItem`, …: the calls of the container's client, in order. */
let events: string[] = [];
/** While set, answers of the quota table are held until a call to the records table has been sent. */
let holdQuotaAnswers = false;
let recordsCallSent: () => void = () => undefined;
let recordsCall: Promise<void> = Promise.resolve();

function armHold(): void {
  holdQuotaAnswers = true;
  recordsCall = new Promise((resolve) => {
    recordsCallSent = resolve;
  });
}

beforeAll(async () => {
  await harness.start();
  const { tables } = harness.dynamo();
  const tableLabel = (name: unknown) =>
    name === tables.quota ? 'Quota' : name === tables.records ? 'Records' : String(name);
  // The quota store has a low-level client of its own; the record store uses the document client.
  for (const dynamoStack of [
    dynamoClient().middlewareStack,
    dynamoDocumentClient().middlewareStack as DynamoDBClient['middlewareStack'],
  ]) {
    dynamoStack.add(
      (next, context) => async (args) => {
        const input = args.input as { TableName?: string; RequestItems?: Record<string, unknown> };
        const table = tableLabel(input.TableName ?? Object.keys(input.RequestItems ?? {})[0]);
        // The catalog's reloads come and go with its cache; only the quota and the records are watched.
        if (table !== 'Quota' && table !== 'Records') return next(args);
        const call = `${table}.${(context.commandName ?? '').replace(/Command$/, '')}`;
        events.push(`send ${call}`);
        if (table === 'Records') recordsCallSent();
        try {
          return await next(args);
        } finally {
          if (table === 'Quota' && holdQuotaAnswers) {
            // Held until the read has left. An implementation that waits for the admission before reading is
            // let go after a while instead, and its calls show the read after the admission's answer.
            let fallback: NodeJS.Timeout | undefined;
            await Promise.race([recordsCall, new Promise((resolve) => (fallback = setTimeout(resolve, 2_000)))]);
            clearTimeout(fallback);
            holdQuotaAnswers = false;
          }
          events.push(`done ${call}`);
        }
      },
      { step: 'initialize', name: 'criticalPathRecorder' },
    );
  }
});
afterAll(() => harness.stop());

beforeEach(() => {
  holdQuotaAnswers = false;
  events = [];
});

async function createNote(title: string): Promise<string> {
  const res = await harness.create('notes', { title }, { app: app('app-open') });
  expect(res.status).toBe(200);
  return res.body.data.id as string;
}

describe('get-one', () => {
  it('sends its read while the admission is in flight, and nothing after it', async () => {
    const id = await createNote('beside');
    events = [];
    armHold();
    const res = await harness.getOne('notes', id, { app: app('app-open') });
    expect(res.status).toBe(200);
    expect(res.body.data.title).toBe('beside');
    // Both calls leave before either answers: the critical path is one round trip, not two.
    expect(events.slice(0, 2)).toEqual(['send Quota.UpdateItem', 'send Records.GetItem']);
    expect([...events.slice(2, 4)].sort()).toEqual(['done Quota.UpdateItem', 'done Records.GetItem']);
    // No release: the environment keeps its slot for its next request.
    expect(events.slice(4)).toEqual([]);
  });

  it('discards what it read when the admission refuses: the caller sees 4001, not the record', async () => {
    const id = await createNote('hidden by the quota');
    const { client, tables } = harness.dynamo();
    // One request of app-crash (limit 1) in flight elsewhere.
    await client.send(
      new PutCommand({
        TableName: tables.quota,
        Item: { pk: 'app#app-crash', leases: { other: Date.now() + 20_000 } },
      }),
    );
    events = [];
    const res = await harness.getOne('notes', id, { app: app('app-crash') });
    expectFailure(res, 4001, /^limit of 1 request in flight reached; retry after (19|20) s$/);
    expect(events.filter((event) => event.startsWith('send'))).toEqual([
      'send Quota.UpdateItem',
      'send Records.GetItem',
      // dynalite does not return the item with the failed condition: the store reads it (DynamoDB does not).
      'send Quota.GetItem',
    ]);
  });
});

describe('get-list', () => {
  it('starts its first read beside the admission and the next ones only once admitted', async () => {
    // app-seq: 3 a minute, so no environment holds a token in advance: each request writes to be admitted.
    await createNote('listed');
    await harness.getList('notes', undefined, { app: app('app-seq') });
    events = [];
    armHold();
    const res = await harness.getList('notes', undefined, { app: app('app-seq') });
    expect(res.status).toBe(200);
    const admitted = events.indexOf('done Quota.UpdateItem');
    expect(events.slice(0, 2)).toEqual(['send Quota.UpdateItem', 'send Records.GetItem']);
    const laterReads = events.slice(admitted + 1).filter((e) => e.startsWith('send Records'));
    expect(laterReads.length).toBeGreaterThan(0);
    expect(events.slice(2, admitted).filter((e) => e.startsWith('send'))).toEqual([]);
    expect(events.filter((e) => e === 'send Quota.UpdateItem')).toHaveLength(1);
  });

  it('reads nothing more than its first call when refused', async () => {
    const { client, tables } = harness.dynamo();
    await client.send(
      new PutCommand({
        TableName: tables.quota,
        Item: { pk: 'app#app-crash', leases: { other: Date.now() + 20_000 } },
      }),
    );
    events = [];
    const res = await harness.getList('notes', undefined, { app: app('app-crash') });
    // The environment's image from the test before already proves the refusal: the slot is held 10-20 s more.
    expectFailure(res, 4001, /^limit of 1 request in flight reached; retry after (1[0-9]|20) s$/);
    expect(events.filter((event) => event.startsWith('send Records'))).toHaveLength(1);
  });
});

describe('create', () => {
  it('is admitted before it writes', async () => {
    // app-patient: 3 a minute, so its environment holds no token in advance and writes to admit. (Its first
    // request also creates its lease map.)
    await harness.getList('notes', undefined, { app: app('app-patient') });
    events = [];
    const res = await harness.create('notes', { title: 'after admission' }, { app: app('app-patient') });
    expect(res.status).toBe(200);
    const admitted = events.indexOf('done Quota.UpdateItem');
    const firstWrite = events.findIndex((event) => /^send Records\.(Put|Update|BatchWrite)/.test(event));
    expect(events[0]).toBe('send Quota.UpdateItem');
    expect(admitted).toBeGreaterThan(0);
    expect(firstWrite).toBeGreaterThan(admitted);
    expect(events.filter((e) => e === 'send Quota.UpdateItem')).toHaveLength(1);
  });
});
