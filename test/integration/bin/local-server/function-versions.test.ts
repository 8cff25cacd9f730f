/**
 * `npm start` deploys the configuration into its store when it starts, as a deployment does (docs/hooks.md):
 * with a persistent store (`--data-dir`, the default `.data`), a restart keeps the version of a function whose
 * source is unchanged and moves on one whose source changed; a fresh store gives every function version 1.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startLocalServer } from '../../../../bin/local-server';
import { createDocumentClient } from '../../../../shared/aws/dynamodb';
import { readDeployedCatalog } from '../../../../shared/catalog-store/catalog-store';
import { readEnvironment } from '../../../../shared/runtime/environment';
import { FIXTURES_DIR } from '../../../support/paths';

const FIXTURES = path.join(FIXTURES_DIR);
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'das-function-versions-'));
  // The hooks fixture names one function by file, beside the configuration.
  mkdirSync(path.join(dir, 'functions'));
  copyFileSync(path.join(FIXTURES, 'functions', 'mask-email.js'), path.join(dir, 'functions', 'mask-email.js'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The hooks fixture, with the `stamp` function's source given by `stampSource`. */
function writeConfig(stampSource: string): string {
  const config = JSON.parse(readFileSync(path.join(FIXTURES, 'hooks-config.json'), 'utf8'));
  const stamp = config.functions.find((fn: { name: string }) => fn.name === 'stamp');
  stamp.source = stampSource;
  const file = path.join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/**
 * Start the local server on `dataDir` (the embedded store, also where the other suites run against moto), read the
 * versions it deployed from its store, stop it. The environment is read afresh: each start has its own endpoint.
 */
async function startAndReadVersions(configFile: string, dataDir?: string) {
  const server = await startLocalServer({ configFile, port: 0, ...(dataDir ? { dataDir } : {}), logSink: () => {} });
  try {
    const env = readEnvironment();
    const raw = new DynamoDBClient({
      endpoint: env.dynamodbEndpoint,
      region: 'local',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    });
    const deployed = await readDeployedCatalog(createDocumentClient(raw), env.catalogTable);
    raw.destroy();
    const versions = deployed?.functionVersions ?? {};
    return {
      stamp: versions.stamp && { version: versions.stamp.version, modifiedAtMs: versions.stamp.modifiedAtMs },
      maskEmail: versions['mask-email'] && {
        version: versions['mask-email'].version,
        modifiedAtMs: versions['mask-email'].modifiedAtMs,
      },
    };
  } finally {
    await server.close();
  }
}

const STAMP_V1 = 'export default async function stamp(data) { return { ...data, stamped: data.email }; }';
const STAMP_V2 = 'export default async function stamp(data) { return { ...data, stamped: "v2" }; }';

describe('function versions across restarts of npm start', () => {
  it('keeps an unchanged function’s version and time, and moves on a changed one', async () => {
    const dataDir = path.join(dir, 'data');
    const before = Date.now();
    const first = await startAndReadVersions(writeConfig(STAMP_V1), dataDir);
    expect(first.stamp?.version).toBe(1);
    expect(first.maskEmail?.version).toBe(1);
    expect(first.stamp?.modifiedAtMs).toBeGreaterThanOrEqual(before);

    const same = await startAndReadVersions(writeConfig(STAMP_V1), dataDir);
    expect(same).toEqual(first);

    const restartedAt = Date.now();
    const changed = await startAndReadVersions(writeConfig(STAMP_V2), dataDir);
    expect(changed.stamp?.version).toBe(2);
    expect(changed.stamp?.modifiedAtMs).toBeGreaterThanOrEqual(restartedAt);
    expect(changed.maskEmail).toEqual(first.maskEmail);
  });

  it('gives every function version 1 on a store that lives in memory', async () => {
    const fresh = await startAndReadVersions(writeConfig(STAMP_V2));
    expect([fresh.stamp?.version, fresh.maskEmail?.version]).toEqual([1, 1]);
  });
});
