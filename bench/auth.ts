/**
 * `npm run bench -- auth`: what authentication costs a warm container per request, signed headers against a
 * personal access key (client-key mode), measured in the same run on the same catalog: each authentication step
 * followed by the access step (dataset and grant), as the pipeline runs them, with the catalog and the
 * application keys already cached, which is the steady state in
 * Lambda: neither mode makes a network call per request (the catalog is re-read once per container every 60 s,
 * the keys once per container per key-store cache period).
 */
import type middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { signRequest } from '../packages/client/src/signature';
import { checkDatasetAccess } from '../shared/access/dataset-access';
import { type AuthenticationStep, authenticate } from '../shared/auth/auth-middleware';
import { authenticateClientKey } from '../shared/auth/client-key-middleware';
import { userKeyDigest } from '../shared/auth/user-key';
import { StaticCatalogProvider } from '../shared/catalog/catalog-provider';
import type { CatalogConfig } from '../shared/catalog/schema';
import { routeIn } from '../shared/contract/client-routes';
import type { RouteDefinition } from '../shared/contract/routes';
import { type ApiEvent, type ApiResult, RequestOutcome, type ServiceContext } from '../shared/http/request';

/** Users in the catalog, two keys each: the lookup is by digest, so its cost should not depend on this. */
const USER_COUNTS = [10, 10_000];
const ITERATIONS = 20_000;

function config(users: number): CatalogConfig {
  return {
    applications: [
      {
        appCode: 'app-bench',
        grants: [{ datasetCode: 'orders', operations: ['read'] }],
        users: Array.from({ length: users }, (_, n) => ({
          userId: `user-${n}`,
          userName: `User ${n}`,
          loginName: `user${n}@example.com`,
          keyHashes: [
            userKeyDigest(`dasu_bench-key-${n}-a-000000000000000000`),
            userKeyDigest(`dasu_bench-key-${n}-b-00000000000000000`),
          ],
        })),
      },
    ],
    datasets: [{ appCode: 'app-bench', datasetCode: 'orders', fields: [{ name: 'status', type: 'string' }] }],
  };
}

type Before = (request: middy.Request<ApiEvent, ApiResult, Error, ServiceContext>) => Promise<void> | void;

/** Microseconds per request of authentication's `before` and then access's, on a fresh request each time. */
async function timeBefore(authentication: AuthenticationStep, route: RouteDefinition, headers: Record<string, string>) {
  const body = { appCode: 'app-bench', datasetCode: 'orders', paramMap: {} };
  const access = checkDatasetAccess({ authentication: authentication.authenticationOf });
  const steps = [authentication.before, access.before] as Before[];
  const request = () => {
    const outcome = new RequestOutcome('bench', route, 0);
    return {
      event: {} as ApiEvent,
      context: { outcome, request: { requestId: 'bench', route, headers, body } } as unknown as ServiceContext &
        Context,
      response: undefined,
      error: undefined,
      internal: {},
    } as unknown as middy.Request<ApiEvent, ApiResult, Error, ServiceContext>;
  };
  const before = async (received: middy.Request<ApiEvent, ApiResult, Error, ServiceContext>) => {
    for (const step of steps) await step(received);
  };
  for (let i = 0; i < 2_000; i += 1) await before(request());
  const started = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i += 1) await before(request());
  return Number(process.hrtime.bigint() - started) / 1000 / ITERATIONS;
}

export async function run(): Promise<void> {
  const signedRoute = routeIn('get-list', 'signed') as RouteDefinition;
  const clientRoute = routeIn('get-list', 'client') as RouteDefinition;
  const accessKeys = ['ak-bench-previous-0001', 'ak-bench-current-00002'];
  const secret = 'sk-bench-signing-secret';
  process.stdout.write(`get-list authentication, warm container, ${ITERATIONS} requests per figure (µs per request)\n`);
  process.stdout.write('users in catalog | signed (2nd of 2 keys) | client key | client / signed\n');
  for (const users of USER_COUNTS) {
    const catalog = new StaticCatalogProvider(config(users));
    const signed = authenticate({
      catalog,
      keys: { applicationKeys: async () => ({ accessKeys, signingSecret: secret }), defaultSecret: async () => secret },
      // Version 1 only: no nonce is claimed.
      nonces: { claim: async () => true },
    });
    const timeStamp = String(Date.now());
    const token = signRequest(
      { accessKey: accessKeys[1] as string, appCode: 'app-bench', datasetCode: 'orders', timeStamp },
      secret,
    );
    const signedUs = await timeBefore(signed, signedRoute, {
      'x-time-stamp': timeStamp,
      'x-app-code': 'app-bench',
      'x-dataset-code': 'orders',
      'x-token': token,
    });
    const client = authenticateClientKey({ catalog });
    const key = `dasu_bench-key-${users - 1}-b-00000000000000000`;
    const clientUs = await timeBefore(client, clientRoute, { 'x-user-ak': key });
    process.stdout.write(
      `${String(users).padStart(16)} | ${signedUs.toFixed(2).padStart(22)} | ${clientUs.toFixed(2).padStart(10)} | ${(clientUs / signedUs).toFixed(2).padStart(15)}\n`,
    );
  }
}
