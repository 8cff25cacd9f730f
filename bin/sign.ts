/**
 * `npm run sign`: print a freshly signed curl command for an application of a configuration file (local keys),
 * so a first request against `npm start` is one paste away.
 *
 *   npm run sign -- [--config <file>] [--app <appCode>] [--dataset <code>] [--op <operation>] [--body <json>] [--url <base>]
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfigFile } from '../shared/catalog/load-config';
import { ROUTES } from '../shared/http/routes';
import { signedCurl } from './local/signed-curl';
import { DEFAULT_CONFIG } from './local-server';

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

function main(): void {
  const { values } = parseArgs({
    options: {
      config: { type: 'string', default: DEFAULT_CONFIG },
      app: { type: 'string' },
      dataset: { type: 'string' },
      op: { type: 'string', default: 'get-list' },
      body: { type: 'string' },
      url: { type: 'string', default: 'http://127.0.0.1:3000' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(
      'Usage: npm run sign -- [--config <file>] [--app <appCode>] [--dataset <code>] [--op <operation>] [--body <json>] [--url <base>]\n' +
        `  --op    one of: ${ROUTES.map((r) => r.operation).join(', ')} (default get-list)\n` +
        '  --body  the paramMap (data operations) or the body fields (execute-sql) as JSON\n',
    );
    return;
  }
  const config = loadConfigFile(values.config);
  const app = values.app
    ? config.applications.find((a) => a.appCode === values.app)
    : config.applications.find((a) => a.accessKey !== undefined);
  if (!app) fail(`no application ${values.app ?? 'with local keys'} in ${values.config}`);
  const accessKey = Array.isArray(app.accessKey) ? app.accessKey[0] : app.accessKey;
  const secret = app.signingSecret ?? config.defaultSigningSecret;
  if (!accessKey || !secret)
    fail(`application ${app.appCode} has no local accessKey and signing secret in ${values.config}`);
  const route = ROUTES.find((r) => r.operation === values.op);
  if (!route) fail(`unknown operation ${values.op}; use one of: ${ROUTES.map((r) => r.operation).join(', ')}`);
  const datasetCode = route.requiresDataset ? (values.dataset ?? app.grants?.[0]?.datasetCode) : values.dataset;
  if (route.requiresDataset && !datasetCode) fail(`--dataset is required for ${route.operation}`);
  let extra: Record<string, unknown> = {};
  if (values.body) {
    try {
      extra = JSON.parse(values.body);
    } catch {
      fail('--body must be JSON');
    }
  }
  const body = route.requiresDataset
    ? { appCode: app.appCode, datasetCode, paramMap: extra }
    : { appCode: app.appCode, ...(datasetCode ? { datasetCode } : {}), ...extra };
  process.stdout.write(
    `${signedCurl({ baseUrl: values.url, path: route.path, appCode: app.appCode, datasetCode, accessKey, secret, body })}\n`,
  );
}

try {
  main();
} catch (error) {
  fail(error instanceof ConfigError ? `Configuration refused.\n${error.message}` : (error as Error).message);
}
