/**
 * `das` end to end: each command runs as its own process through bin/das.js (what `npx das` runs), against
 * the real local server where it calls one. Exit codes: 0 done, 1 failed, 2 wrong command line.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { verifySignature } from '../../../packages/client/src/signature';
import { failureWith } from '../../support/failure-envelope';
import { freePort } from '../../support/free-port';
import { FIXTURES_DIR } from '../../support/paths';
import { type DasRun, runDas, startDasServe } from '../../support/run-das';
import { FIXTURE_CONFIG, MAIN_APP, ServiceHarness } from '../../support/service-harness';

const VECTORS = JSON.parse(readFileSync(path.join(FIXTURES_DIR, 'signature-vectors.json'), 'utf8')) as {
  vectors: { accessKey: string; appCode: string; datasetCode?: string; timeStamp: number; secret: string }[];
};

type Run = DasRun;

const das = runDas;

const harness = new ServiceHarness();
const scratch = mkdtempSync(path.join(tmpdir(), 'das-cli-'));
beforeAll(() => harness.start());
afterAll(async () => {
  await harness.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const KEYS = ['--app', MAIN_APP.appCode, '--key', MAIN_APP.accessKey, '--secret', MAIN_APP.secret];

describe('help and usage errors', () => {
  it('das --help lists every command; each command has its own --help', async () => {
    const runs = await Promise.all([
      das(['--help']),
      ...['serve', 'config', 'indexes', 'sign', 'token', 'call', 'openapi'].map((c) => das([c, '--help'])),
    ]);
    const [top, ...commands] = runs as [Run, ...Run[]];
    expect(top.code).toBe(0);
    for (const name of ['serve', 'config validate|plan', 'indexes', 'sign', 'token', 'call <operation>', 'openapi']) {
      expect(top.stdout).toContain(`  ${name} `);
    }
    for (const [i, name] of ['serve', 'config', 'indexes', 'sign', 'token', 'call', 'openapi'].entries()) {
      expect([name, commands[i]?.code]).toEqual([name, 0]);
      expect(commands[i]?.stdout).toContain(`Usage: das ${name}`);
    }
  });

  it('an unknown command, an unknown option or a missing argument is exit code 2 with a pointer to --help', async () => {
    const [unknown, option, missing, badParam] = await Promise.all([
      das(['frobnicate']),
      das(['sign', '--colour', 'blue']),
      das(['call', 'get-one', ...KEYS]),
      das(['call', 'get-one', '--dataset', 'typed', '--param', 'id', ...KEYS]),
    ]);
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining("das: unknown command 'frobnicate'") });
    expect(option).toMatchObject({ code: 2, stderr: expect.stringContaining("Unknown option '--colour'") });
    expect(option.stderr).toContain('See: das sign --help');
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining('--dataset is required for get-one') });
    expect(badParam).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--param must be name=value or name:=<json>, not 'id'"),
    });
  });
});

/** Writes `records` as a JSON file in the scratch directory; answers its path. */
function writeRecords(name: string, records: unknown[]): string {
  const file = path.join(scratch, name);
  writeFileSync(file, JSON.stringify(records));
  return file;
}

describe('das config validate', () => {
  it('accepts a valid file and lists every problem of a wrong one, by path, with exit code 1', async () => {
    const broken = path.join(scratch, 'broken.json');
    writeFileSync(
      broken,
      JSON.stringify({
        applications: [{ appCode: 'app-a', grants: [{ datasetCode: 'invoices', operations: ['read'] }] }],
        datasets: [
          {
            appCode: 'app-a',
            datasetCode: 'orders',
            fields: [
              { name: 'status', type: 'enum' },
              { name: 'x', type: 'money' },
            ],
          },
        ],
      }),
    );
    const [valid, invalid, json] = await Promise.all([
      das(['config', 'validate', FIXTURE_CONFIG]),
      das(['config', 'validate', broken]),
      das(['config', 'validate', broken, '--json']),
    ]);
    expect(valid).toMatchObject({
      code: 0,
      stdout: `${FIXTURE_CONFIG}: valid (3 applications, 4 datasets, 0 queries)\n`,
    });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain(`${broken}: 3 problem(s)`);
    expect(invalid.stderr).toContain('datasets[0].fields[1].type:');
    expect(invalid.stderr).toContain('datasets[0].fields[0].options: an enum field needs options');
    expect(invalid.stderr).toContain("applications[0].grants[0].datasetCode: unknown dataset 'invoices'");
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      file: broken,
      valid: false,
      problems: expect.arrayContaining([
        { path: 'datasets[0].fields[0].options', message: 'an enum field needs options' },
      ]),
    });
  });

  it('refuses a relation to a missing dataset or field, by path', async () => {
    const file = path.join(scratch, 'relations.json');
    writeFileSync(
      file,
      JSON.stringify({
        applications: [{ appCode: 'app-a' }],
        datasets: [
          {
            appCode: 'app-a',
            datasetCode: 'orders',
            fields: [{ name: 'customer_id', type: 'string' }],
            relations: [
              { name: 'customer', field: 'customer_id', dataset: 'customers' },
              { name: 'buyer', field: 'buyer_id', dataset: 'orders' },
            ],
          },
        ],
      }),
    );
    const result = await das(['config', 'validate', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${file}: 2 problem(s)`);
    expect(result.stderr).toContain("datasets[0].relations[0].dataset: unknown dataset 'customers'");
    expect(result.stderr).toContain("datasets[0].relations[1].field: unknown field 'buyer_id' of dataset 'orders'");
  });

  it('names each query whose SQL custom SQL does not accept, and the construct, before a deploy', async () => {
    const file = path.join(scratch, 'queries.json');
    writeFileSync(
      file,
      JSON.stringify({
        applications: [{ appCode: 'app-a', grants: [{ datasetCode: 'orders', operations: ['read'] }] }],
        datasets: [{ appCode: 'app-a', datasetCode: 'orders', fields: [{ name: 'placed_at', type: 'datetime' }] }],
        queries: [
          {
            appCode: 'app-a',
            sqlCode: 'by-month',
            sql: "SELECT DATE_FORMAT(placed_at, '%Y-%m') AS m, COUNT(*) FROM orders GROUP BY m",
          },
          { appCode: 'app-a', sqlCode: 'sleepy', sql: 'SELECT SLEEP(1) FROM orders' },
          { appCode: 'app-a', sqlCode: 'locking', sql: 'SELECT * FROM orders FOR UPDATE' },
        ],
      }),
    );
    const run = await das(['config', 'validate', file, '--json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).problems).toEqual([
      {
        path: 'queries[1].sql',
        message:
          "query 'sleepy' uses the function SLEEP() at character 8, which custom SQL does not accept (MySQL 8 as docs/interface.md §19 lists it)",
      },
      {
        path: 'queries[2].sql',
        message:
          "query 'locking' uses locking clauses (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE) at character 22, which custom SQL does not accept (MySQL 8 as docs/interface.md §19 lists it)",
      },
    ]);
  });

  it('a file that cannot be read is a problem too', async () => {
    const run = await das(['config', 'validate', path.join(scratch, 'missing.json')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('(file): cannot be read');
  });
});

describe('das sign and das token', () => {
  it('signs exactly like the signature vectors existing clients compute', async () => {
    const [withDataset, withoutDataset] = VECTORS.vectors as [(typeof VECTORS.vectors)[0], (typeof VECTORS.vectors)[0]];
    const [a, b] = await Promise.all([
      das([
        'sign',
        '--app',
        withDataset.appCode,
        '--dataset',
        'orders',
        '--key',
        withDataset.accessKey,
        '--secret',
        withDataset.secret,
        '--timestamp',
        '1763800000000',
      ]),
      das(['sign', '--json', '--timestamp', '1763800000000'], {
        DAS_APP_CODE: withoutDataset.appCode,
        DAS_ACCESS_KEY: withoutDataset.accessKey,
        DAS_SIGNING_SECRET: withoutDataset.secret,
      }),
    ]);
    expect(a).toMatchObject({
      code: 0,
      stdout:
        'X-Time-Stamp: 1763800000000\nX-App-Code: app-demo\nX-Dataset-Code: orders\nX-Token: bTBf0vSF7OoO4KnVbZStVxDTmsqBlDf/tS1xZSoQ4C4=\n',
    });
    expect(JSON.parse(b.stdout)).toEqual({
      'X-Time-Stamp': '1763800000000',
      'X-App-Code': 'app-demo',
      'X-Token': 'AdDwLbTGoiiH7IH5r2zOiedCAWpiUXF2tuGDGOwz6aE=',
    });
    // Three headers without --dataset, as its help says, and a word on standard error about the fourth.
    expect(a.stderr).toBe('');
    expect(b.stderr).toBe(
      'das sign: no --dataset, so no X-Dataset-Code: these headers sign a request without a dataset (execute-sql); ' +
        'a data operation needs --dataset <code>\n',
    );
  });

  it('sign --help and das --help count the headers as sign prints them', async () => {
    const [help, top] = await Promise.all([das(['sign', '--help']), das(['--help'])]);
    expect(help.stdout).toContain(
      'Prints the signed headers of a request: X-Time-Stamp, X-App-Code, X-Dataset-Code (only with --dataset, which\n' +
        'every data operation needs) and X-Token, signed now (or at --timestamp).',
    );
    expect(top.stdout).toMatch(
      /^ {2}sign +print the signed headers of a request \(X-Dataset-Code with --dataset; --curl: a signed curl\)$/m,
    );
    expect(`${help.stdout}${top.stdout}`).not.toContain('four');
  });

  it('sign --curl (npm run sign) prints a curl the local server accepts', async () => {
    const run = await das([
      'sign',
      '--curl',
      '--config',
      FIXTURE_CONFIG,
      '--app',
      'app-main',
      '--op',
      'create',
      '--dataset',
      'notes',
      '--body',
      '{"title":"curl"}',
      '--url',
      harness.url,
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^curl -sS -X POST '.*\/openapi\/data\/create'/);
    const token = /X-Token: ([^']+)'/.exec(run.stdout)?.[1] as string;
    const timeStamp = /X-Time-Stamp: (\d+)'/.exec(run.stdout)?.[1] as string;
    expect(
      verifySignature(
        token,
        { appCode: 'app-main', datasetCode: 'notes', timeStamp },
        [MAIN_APP.accessKey],
        MAIN_APP.secret,
      ),
    ).toBe(true);
    expect(run.stdout).toContain(`-d '{"appCode":"app-main","datasetCode":"notes","paramMap":{"title":"curl"}}'`);
  });

  it('token mints {token, timeStamp, timestamp, expiresAt} valid for 10 minutes', async () => {
    const run = await das(['token', ...KEYS, '--dataset', 'notes', '--timestamp', '1763800000000']);
    expect(run.code).toBe(0);
    const minted = JSON.parse(run.stdout);
    expect(Object.keys(minted)).toEqual(['token', 'timeStamp', 'timestamp', 'expiresAt']);
    expect(minted.timeStamp).toBe('1763800000000');
    // The platform's browser helpers read a numeric `timestamp`.
    expect(minted.timestamp).toBe(1763800000000);
    expect(minted.expiresAt).toBe(1763800600000);
    expect(
      verifySignature(
        minted.token,
        { appCode: 'app-main', datasetCode: 'notes', timeStamp: minted.timeStamp },
        [MAIN_APP.accessKey],
        MAIN_APP.secret,
      ),
    ).toBe(true);
  });

  it('--key without --secret is a usage error naming what is missing', async () => {
    const run = await das(['token', '--app', 'app-main', '--key', 'ak-1234567890']);
    expect(run).toMatchObject({
      code: 2,
      stderr:
        'das token: --secret missing (or DAS_SIGNING_SECRET): --app, --key and --secret go together\n' +
        'See: das token --help\n',
    });
    const keyOnly = await das(['call', 'get-list', '--dataset', 'typed'], { DAS_ACCESS_KEY: 'ak-1234567890' });
    expect(keyOnly).toMatchObject({
      code: 2,
      stderr:
        'das call: --app and --secret missing (or DAS_APP_CODE, DAS_SIGNING_SECRET): --app, --key and --secret go together\n' +
        'See: das call --help\n',
    });
  });
});

describe('das call', () => {
  it('create then get-one by the id it answered; the envelope goes to stdout', async () => {
    const created = await das([
      'call',
      'create',
      '--url',
      harness.url,
      '--dataset',
      'typed',
      ...KEYS,
      '--param',
      's=from the CLI',
      '--param',
      'i:=42',
      '--json',
      '{"b":true}',
    ]);
    expect(created.code).toBe(0);
    const envelope = JSON.parse(created.stdout);
    expect(envelope).toMatchObject({ success: true, msg: null, data: { s: 'from the CLI', i: 42, b: true } });
    const fetched = await das(['call', 'getOne', '--dataset', 'typed', ...KEYS, '--param', `id=${envelope.data.id}`], {
      DAS_URL: harness.url,
    });
    expect(fetched.code).toBe(0);
    expect(JSON.parse(fetched.stdout).data).toEqual(envelope.data);
  });

  it('a failure envelope is printed too, with exit code 1 and the status on stderr', async () => {
    const run = await das([
      'call',
      'get-one',
      '--url',
      harness.url,
      '--dataset',
      'typed',
      ...KEYS,
      '--param',
      'id=01ARZ3NDEKTSV4RRFFQ69G5FAV',
    ]);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual(
      failureWith(2002, "record '01ARZ3NDEKTSV4RRFFQ69G5FAV' not found in dataset 'typed'"),
    );
    expect(run.stderr).toMatch(/^HTTP 404, request id \S+/);
  });

  it('batch-create sends the records of --file and prints their ids; a repeat with the key is replayed', async () => {
    const file = path.join(scratch, 'records.json');
    writeFileSync(
      file,
      JSON.stringify([
        { s: 'first of the file', i: 1 },
        { s: 'second of the file', i: 2 },
      ]),
    );
    const args = ['call', 'batch-create', '--url', harness.url, '--dataset', 'typed', ...KEYS, '--file', file];
    const run = await das([...args, '--idempotency-key', 'cli-load-1']);
    expect(run.code).toBe(0);
    const ids = JSON.parse(run.stdout).data;
    expect(ids).toHaveLength(2);
    const second = await das([
      'call',
      'get-one',
      '--url',
      harness.url,
      '--dataset',
      'typed',
      ...KEYS,
      '--param',
      `id=${ids[1]}`,
    ]);
    expect(JSON.parse(second.stdout).data).toMatchObject({ id: ids[1], s: 'second of the file', i: 2 });
    const again = await das([...args, '--idempotency-key', 'cli-load-1']);
    expect(JSON.parse(again.stdout).data).toEqual(ids);
  });

  it('update with an array of ids changes them all and prints their ids and total', async () => {
    const created = await das([
      'call',
      'batch-create',
      '--url',
      harness.url,
      '--dataset',
      'typed',
      ...KEYS,
      '--file',
      writeRecords('to-update.json', [
        { s: 'one', i: 1 },
        { s: 'two', i: 2 },
      ]),
    ]);
    const ids = JSON.parse(created.stdout).data as string[];
    const run = await das([
      'call',
      'update',
      '--url',
      harness.url,
      '--dataset',
      'typed',
      ...KEYS,
      '--json',
      JSON.stringify({ id: [ids[1], ids[0]], s: 'changed together' }),
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ success: true, data: { ids: [ids[1], ids[0]], total: 2 } });
    for (const id of ids) {
      const read = await das([
        'call',
        'get-one',
        '--url',
        harness.url,
        '--dataset',
        'typed',
        ...KEYS,
        '--param',
        `id=${id}`,
      ]);
      expect(JSON.parse(read.stdout).data.s).toBe('changed together');
    }
  });

  it('batch-create without a readable array file is a usage error (exit code 2)', async () => {
    const notArray = path.join(scratch, 'object.json');
    writeFileSync(notArray, '{"s":"x"}');
    const run = await das([
      'call',
      'batch-create',
      '--url',
      harness.url,
      '--dataset',
      'typed',
      ...KEYS,
      '--file',
      notArray,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${notArray} must hold a JSON array of records`);
    const missing = await das(['call', 'batch-create', '--url', harness.url, '--dataset', 'typed', ...KEYS]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('batch-create needs --file <records.json>');
  });

  it('no service at the address is exit code 1 with the reason', async () => {
    const run = await das(['call', 'get-list', '--url', 'http://127.0.0.1:9', '--dataset', 'typed', ...KEYS]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'no service at http://127.0.0.1:9 (bad port) — is `npm start` running? set --url or DAS_URL\n',
    );
  });

  it('a refused connection says where it looked and what to check', async () => {
    const closed = await freePort();
    const run = await das(['call', 'get-list', '--dataset', 'typed', ...KEYS], {
      DAS_URL: `http://127.0.0.1:${closed}`,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `no service at http://127.0.0.1:${closed} (ECONNREFUSED) — is \`npm start\` running? set --url or DAS_URL\n`,
    );
  });
});

describe('das serve', () => {
  it('starts the service (same options as npm start), answers /health and stops on SIGTERM', async () => {
    const server = await startDasServe([
      '--port',
      '0',
      '--data-dir',
      path.join(scratch, 'data'),
      '--config',
      FIXTURE_CONFIG,
      '--quiet',
    ]);
    expect(server.output()).toContain(`API reference: ${server.url}/docs`);
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    expect(await server.stop()).toBe(0);
  });
});
