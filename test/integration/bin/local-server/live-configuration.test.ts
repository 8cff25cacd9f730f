/**
 * A configuration changed under stored records (docs/interface.md §17), as a user meets it: the demo configuration,
 * 12 orders written, then `items` made indexed and `region` no longer indexed, and `npm start` again on the same
 * data directory. `das config plan` says beforehand what the change will do; every answer is the one the new
 * configuration gives over all 12 records, at once and once `das indexes` shows the new index complete; a refused
 * change stops `npm start` with every problem by path, and the configuration applied before keeps serving.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { createDocumentClient } from '../../../../shared/aws/dynamodb';
import { applyConfiguration } from '../../../../shared/catalog-store/catalog-store';
import { loadConfigFile } from '../../../../shared/catalog-store/load-config';
import { CATALOG_TABLE, RECORDS_TABLE, tableNameFor } from '../../../../shared/storage/table-definitions';
import { toCreateTableInput } from '../../../../shared/storage/table-setup';
import { REPO_ROOT } from '../../../support/paths';
import { runDas } from '../../../support/run-das';
import {
  CHILD_ENV,
  callService,
  type ServiceProcess,
  serviceExit,
  startServiceProcess,
} from '../../../support/service-process';

const scratch = mkdtempSync(path.join(tmpdir(), 'das-live-config-'));
const dataDir = path.join(scratch, 'data');
const demo = JSON.parse(readFileSync(path.join(REPO_ROOT, 'config', 'demo.json'), 'utf8'));

type DemoConfig = typeof demo;

/** The demo configuration changed by `edit`, written beside the data directory (function files resolved). */
function demoWith(
  name: string,
  edit: (orders: { appCode: string; fields: Record<string, unknown>[] }) => void,
): string {
  const config: DemoConfig = structuredClone(demo);
  config.functions = config.functions.map((fn: { file?: string }) =>
    fn.file ? { ...fn, file: path.join(REPO_ROOT, 'config', fn.file) } : fn,
  );
  edit(config.datasets.find((d: { datasetCode: string }) => d.datasetCode === 'orders'));
  const file = path.join(scratch, name);
  writeFileSync(file, JSON.stringify(config));
  return file;
}

const field = (orders: { fields: Record<string, unknown>[] }, name: string) =>
  orders.fields.find((f) => f.name === name) as Record<string, unknown>;

const BEFORE = demoWith('before.json', () => undefined);
const AFTER = demoWith('after.json', (orders) => {
  field(orders, 'items').indexed = true;
  field(orders, 'region').indexed = false;
});
const REFUSED = demoWith('refused.json', (orders) => {
  field(orders, 'items').indexed = true;
  field(orders, 'region').indexed = false;
  field(orders, 'amount').type = 'string';
  (field(orders, 'status') as { options: string[] }).options = ['paid', 'shipped'];
  orders.appCode = 'app-partner-eu';
});

const ITEMS = [0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 0];
let service: ServiceProcess | undefined;

afterAll(async () => {
  await service?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

async function list(paramMap: Record<string, unknown>): Promise<{ total: number; items: number[] }> {
  const answer = await callService(service?.url as string, 'get-list', 'orders', {
    paramMap: { pageSize: 100, ...paramMap },
  });
  expect(answer.errorMsg).toBeUndefined();
  return {
    total: answer.data.paging.totalCount,
    items: answer.data.tableData.map((record: { items: number }) => record.items),
  };
}

async function expectExactAnswers(): Promise<void> {
  expect(await list({ items: 3 })).toEqual({ total: 3, items: [3, 3, 3] });
  expect((await list({ items_start: 2 })).total).toBe(6);
  expect((await list({ ytSortList: [{ items: 'desc' }] })).items).toEqual([3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0]);
  expect((await list({ region: 'EU' })).total).toBe(6);
}

describe('a configuration changed under stored records', () => {
  it('writes 12 orders with the demo configuration', async () => {
    service = await startServiceProcess(['--config', BEFORE, '--data-dir', dataDir]);
    for (const [i, items] of ITEMS.entries()) {
      const answer = await callService(service.url, 'create', 'orders', {
        paramMap: { customer_id: `c-${i}`, amount: 10 + i, status: 'new', region: i % 2 ? 'EU' : 'US', items },
      });
      expect(answer.success).toBe(true);
    }
    await service.stop();
  }, 120_000);

  it('das config plan says what the change will do, and writes nothing', async () => {
    const plan = await runDas(['config', 'plan', '--config', AFTER, '--data-dir', dataDir], CHILD_ENV);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toBe(
      [
        `${AFTER}, compared with the configuration applied last to the local store in ${dataDir}:`,
        '  orders (changed)',
        '    index to build: items (12 records to index)',
        '    index to drop: region (12 records to clear)',
        'Nothing refused: applying it starts what is listed above.',
        '',
      ].join('\n'),
    );
  }, 60_000);

  it('answers exactly at once after npm start applies it, and once das indexes shows the new index complete', async () => {
    service = await startServiceProcess(['--config', AFTER, '--data-dir', dataDir]);
    expect(service.output()).toContain(
      'Changes from the configuration applied last (indexes build in the background; das indexes shows them):\n' +
        '  orders (changed)\n' +
        '    index to build: items (12 records to index)\n' +
        '    index to drop: region (12 records to clear)\n',
    );
    await expectExactAnswers();

    let shown = '';
    for (let attempt = 0; attempt < 60 && !/items\s+complete/.test(shown); attempt++) {
      const indexes = await runDas(['indexes', '--url', service.url, '--dataset', 'orders'], CHILD_ENV);
      expect(indexes.code).toBe(0);
      shown = indexes.stdout;
      if (!/items\s+complete/.test(shown)) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const lines = shown.split('\n');
    expect(lines[0]).toBe('orders');
    expect(lines.filter((line) => /^\s+\S+\s+complete/.test(line)).map((line) => line.trim().split(/\s+/)[0])).toEqual([
      'customer_id',
      'amount',
      'status',
      'items',
    ]);
    // The dropped index stays listed until its entries are removed (after the settle window of a deployment).
    expect(lines.some((line) => /^\s+region\s+dropping \d+%/.test(line))).toBe(true);
    await expectExactAnswers();
    await service.stop();
  }, 120_000);

  it('refuses an incompatible change whole, by path, and keeps the one applied before', async () => {
    const plan = await runDas(['config', 'plan', '--config', REFUSED, '--data-dir', dataDir], CHILD_ENV);
    expect(plan.code).toBe(1);
    const problems = [
      `  datasets[1].appCode: dataset 'orders' belongs to 'app-demo'; a dataset's owner cannot change (stored records stay where they are)`,
      "  datasets[1].fields[1].type: field 'amount' of dataset 'orders' holds number values; its type cannot change to string (only integer may become number). Add a field with a new name instead",
      "  datasets[1].fields[3].options: option 'new' of field 'status' is still used by stored records of dataset 'orders'; it cannot be removed",
    ];
    expect(plan.stdout).toContain(
      ['Refused: 3 problems; the configuration applied last keeps serving', ...problems].join('\n'),
    );

    const refused = await serviceExit(['--config', REFUSED, '--data-dir', dataDir]);
    expect(refused.code).toBe(1);
    expect(refused.output).toContain(
      `Configuration refused.\n${REFUSED} (compared with the configuration applied last): 3 problem(s)\n${problems.join('\n')}`,
    );

    service = await startServiceProcess(['--config', AFTER, '--data-dir', dataDir]);
    expect(service.output()).not.toContain('Changes from the configuration applied last');
    await expectExactAnswers();
  }, 120_000);
});

describe("das config plan --stage: a deployment's catalog, read with the caller's AWS credentials", () => {
  // The deployment's tables on a DynamoDB endpoint of their own, reached through the SDK's default chain.
  const store = dynalite({ createTableMs: 0 });
  let endpoint = '';

  beforeAll(async () => {
    await new Promise<void>((resolve) => store.listen(0, resolve));
    endpoint = `http://127.0.0.1:${(store.address() as AddressInfo).port}`;
    const raw = new DynamoDBClient({
      endpoint,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    });
    const tables = { catalog: tableNameFor('dev', CATALOG_TABLE), records: tableNameFor('dev', RECORDS_TABLE) };
    await raw.send(new CreateTableCommand(toCreateTableInput(CATALOG_TABLE, tables.catalog)));
    await raw.send(new CreateTableCommand(toCreateTableInput(RECORDS_TABLE, tables.records)));
    // What the deploy's catalog step applied last.
    await applyConfiguration(createDocumentClient(raw), tables, loadConfigFile(BEFORE), { settleMs: 0 });
    raw.destroy();
  });

  afterAll(() => new Promise<void>((resolve) => store.close(() => resolve())));

  const aws = () => ({
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'x',
    AWS_SECRET_ACCESS_KEY: 'x',
  });

  it('prints the change against the stage, and refuses what the stage cannot take', async () => {
    const plan = await runDas(['config', 'plan', '--config', AFTER, '--stage', 'dev'], { ...CHILD_ENV, ...aws() });
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toBe(
      [
        `${AFTER}, compared with the configuration applied last to stage 'dev' (table data-access-service-dev-catalog):`,
        '  orders (changed)',
        '    index to build: items (0 records to index)',
        '    index to drop: region (0 records to clear)',
        'Nothing refused: applying it starts what is listed above.',
        '',
      ].join('\n'),
    );
    const refused = await runDas(['config', 'plan', '--config', REFUSED, '--stage', 'dev'], { ...CHILD_ENV, ...aws() });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('Refused: 2 problems; the configuration applied last keeps serving');
  }, 60_000);

  it('says which stage it could not read', async () => {
    const missing = await runDas(['config', 'plan', '--config', AFTER, '--stage', 'prod'], { ...CHILD_ENV, ...aws() });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("cannot read stage 'prod' (ResourceNotFoundException:");
  }, 60_000);
});
