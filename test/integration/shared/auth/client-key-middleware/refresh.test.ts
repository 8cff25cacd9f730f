/**
 * Client-key mode over time: a key revoked in the configuration stops working with the next catalog refresh
 * (the container caches the catalog for 60 s), the other keys keep working, and client-key requests count against
 * the application's limits together with signed ones. The real handlers and the real catalog provider, on a clock
 * the test drives.
 */
import path from 'node:path';
import { CachedCatalogProvider } from '../../../../../shared/catalog/catalog-provider';
import type { CatalogConfig } from '../../../../../shared/catalog/schema';
import { applyConfiguration, readCatalog } from '../../../../../shared/catalog-store/catalog-store';
import { loadConfigFile } from '../../../../../shared/catalog-store/load-config';
import { createHandler } from '../../../../../shared/composition/pipeline';
import { type RuntimePorts, runtimePorts } from '../../../../../shared/composition/ports';
import type { Operation } from '../../../../../shared/operation/operation';
import { getListOperation } from '../../../../../shared/operations/get-list-operation';
import { loginUserInfoOperation } from '../../../../../shared/operations/login-user-info';
import { environment } from '../../../../../shared/runtime/environment';
import { FIXTURES_DIR } from '../../../../support/paths';
import { type AppCredentials, type CallResult, ServiceHarness } from '../../../../support/service-harness';

const CONFIG = path.join(FIXTURES_DIR, 'client-key-config.json');
const OPERATIONS: Record<string, Operation> = {
  'get-list': getListOperation,
  'login-user-info': loginUserInfoOperation,
};
const ALICE = 'dasu_alice-primary-key-0001-Qm9vdHN0cmFwcGVk';
const ALICE_SECOND = 'dasu_alice-second-key-0002-U2Vjb25kS2V5Rm9y';
const ERIN = 'dasu_erin-limited-app-key-01-TGltaXRlZEFwcA';
const ALICE_DIGEST = '6b618d8b7aaabc92367e96a8e03ec2794c6814c0fdaf1aa04a1e4a3b1645e658';
const LIMITED: AppCredentials = {
  appCode: 'app-limited',
  accessKey: 'ak-limited-client-fixture-0001',
  secret: 'client-key-fixture-default-secret',
};

let clock = Date.parse('2026-11-23T05:00:05Z');
let ports: RuntimePorts | undefined;
/** Reads of the key store (Secrets Manager in a deployment), counted at the port. */
let keyStoreReads = 0;

/** The container's ports, with the catalog provider as deployed (60 s cache) on the test's clock. */
function drivenPorts(): RuntimePorts {
  if (ports) return ports;
  const real = runtimePorts();
  const env = environment();
  const store = harness.dynamo().client;
  ports = {
    ...real,
    catalog: new CachedCatalogProvider({ load: () => readCatalog(store, env.catalogTable), now: () => clock }),
    keys: {
      applicationKeys: (appCode) => {
        keyStoreReads += 1;
        return real.keys.applicationKeys(appCode);
      },
      defaultSecret: () => {
        keyStoreReads += 1;
        return real.keys.defaultSecret();
      },
    },
  };
  return ports;
}

const harness = new ServiceHarness(CONFIG, {
  loadHandler: async (file) => {
    const operation = OPERATIONS[file];
    return operation ? createHandler(operation, { now: () => clock, ports: drivenPorts }) : undefined;
  },
});
beforeAll(() => harness.start());
afterAll(() => harness.stop());

async function whoAmI(key: string): Promise<CallResult> {
  const response = await fetch(`${harness.url}/client/user/loginUserInfo`, { headers: { 'X-User-AK': key } });
  return { status: response.status, headers: response.headers, body: JSON.parse(await response.text()) };
}

async function listAs(key: string, appCode: string, datasetCode: string): Promise<CallResult> {
  const response = await fetch(`${harness.url}/client/data/get-list`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-User-AK': key },
    body: JSON.stringify({ appCode, datasetCode }),
  });
  return { status: response.status, headers: response.headers, body: JSON.parse(await response.text()) };
}

/** What a deploy does: the configuration, without one of alice's two key digests, becomes the catalog. */
async function deployWithoutAlicesFirstKey(): Promise<void> {
  const config: CatalogConfig = loadConfigFile(CONFIG);
  const alice = config.applications[0]?.users?.find((user) => user.userId === 'alice');
  if (!alice) throw new Error('fixture has no alice');
  alice.keyHashes = alice.keyHashes.filter((digest) => digest !== ALICE_DIGEST);
  const env = environment();
  await applyConfiguration(harness.dynamo().client, { catalog: env.catalogTable, records: env.recordsTable }, config, {
    settleMs: 0,
  });
}

describe('revoking a key', () => {
  it('takes effect with the next catalog refresh (at most 60 s), and leaves the user’s other keys working', async () => {
    expect((await whoAmI(ALICE)).body.data.id).toBe('alice');

    await deployWithoutAlicesFirstKey();
    // Within the container's 60 s catalog cache the revoked key still works...
    clock += 59_000;
    expect((await whoAmI(ALICE)).status).toBe(200);
    // ...and from the first refresh after it, it does not.
    clock += 2_000;
    const revoked = await whoAmI(ALICE);
    expect(revoked.status).toBe(401);
    expect(revoked.body).toEqual({
      success: false,
      msg: null,
      data: null,
      errorCode: 1002,
      errorMsg: 'X-User-AK is not an active personal access key',
    });
    const other = await whoAmI(ALICE_SECOND);
    expect(other.status).toBe(200);
    expect(other.body.data).toEqual({
      id: 'alice',
      userName: 'Alice Martin',
      loginName: 'alice@example.com',
      appCode: 'app-main',
      role: 'admin',
    });
  });
});

describe('limits', () => {
  it('client-key and signed requests count against the same application limits', async () => {
    // A fresh minute for app-limited (perMinute 4).
    clock = Date.parse('2026-11-23T05:10:00Z');
    const signed = () => harness.getList('reports', undefined, { app: LIMITED, timeStamp: clock });
    const answers = [
      await signed(),
      await listAs(ERIN, 'app-limited', 'reports'),
      await signed(),
      await whoAmI(ERIN),
      await listAs(ERIN, 'app-limited', 'reports'),
      await signed(),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 429, 429]);
    expect(answers.map((a) => a.headers.get('ratelimit-remaining'))).toEqual(['3', '2', '1', '0', '0', '0']);
    expect(answers[4]?.body.errorCode).toBe(4001);
    expect(answers[4]?.headers.get('retry-after')).toBe('60');
  });
});

describe('the key store', () => {
  it('is never read for a client-key request; a signed request reads it', async () => {
    clock = Date.parse('2026-11-23T05:20:00Z');
    const before = keyStoreReads;
    for (let n = 0; n < 2; n += 1) expect((await listAs(ERIN, 'app-limited', 'reports')).status).toBe(200);
    expect((await whoAmI(ERIN)).status).toBe(200);
    expect(keyStoreReads).toBe(before);
    expect((await harness.getList('reports', undefined, { app: LIMITED, timeStamp: clock })).status).toBe(200);
    expect(keyStoreReads).toBeGreaterThan(before);
  });
});
