/**
 * `das sign`: the signed headers of a request (X-Dataset-Code only with --dataset), for curl, Postman or a
 * hand-written client; with --curl a complete signed curl command (what `npm run sign` prints).
 */
import { OPERATIONS, routeFor } from '../operations.js';
import { type CommandIo, integerOption, parseCommandArgs, UsageError } from './cli-io.js';
import { CREDENTIAL_HELP, CREDENTIAL_OPTIONS, resolveCredentials } from './credentials.js';
import { operationName } from './operation-names.js';
import { serviceUrl } from './service-url.js';
import { signedCurl, signedHeaders } from './signed-curl.js';

const HELP = 'das sign --help';

export const SIGN_USAGE = `Usage: das sign [--app <appCode>] [--dataset <code>] [--key <accessKey> --secret <secret>] [--timestamp <ms>] [--json]
       das sign --curl [--op <operation>] [--dataset <code>] [--body <json>] [--url <base>] [key options]

Prints the signed headers of a request: X-Time-Stamp, X-App-Code, X-Dataset-Code (only with --dataset, which
every data operation needs) and X-Token, signed now (or at --timestamp). The token is valid for 10 minutes.

Signature version 2 (an application with "signatureVersion": 2 in --config, or --sign-version 2) also signs the
operation, the body and a single-use nonce (headers X-Sign-Version and X-Nonce): the headers then go with
--op and --body, and the exact body to send is printed after them (--json: {"headers", "body"}).

${CREDENTIAL_HELP}
  --dataset <code>    the dataset the request names (data operations; optional for execute-sql)
  --timestamp <ms>    sign for this time instead of now (milliseconds since the epoch)
  --json              print the headers as a JSON object
  --curl              print a signed curl command instead (npm run sign does this)
  --op <operation>    with --curl: ${OPERATIONS.map((r) => r.operation).join(', ')} (default get-list)
  --body <json>       with --curl: the paramMap (data operations), the array of records (batch-create) or the
                      body fields (execute-sql)
  --url <base>        with --curl: the service (env DAS_URL; default: the local service npm start
                      runs, else http://127.0.0.1:3000)
  --sign-version <n>  1 or 2 (default: the application's signatureVersion in --config, else 1)

Examples:
  das sign --app app-demo --dataset orders --key ak-7f3c9a1b2d4e --secret sk-demo-secret
  npm run -s sign -- --op create --dataset orders --body '{"customer_id":"c-1","amount":12.5,"status":"new"}' | sh
`;

export function runSign(args: string[], io: CommandIo): void {
  const { values } = parseCommandArgs(
    args,
    {
      ...CREDENTIAL_OPTIONS,
      dataset: { type: 'string' },
      timestamp: { type: 'string' },
      json: { type: 'boolean' },
      curl: { type: 'boolean' },
      op: { type: 'string' },
      body: { type: 'string' },
      url: { type: 'string' },
      'sign-version': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    HELP,
  );
  if (values.help) {
    io.out(SIGN_USAGE);
    return;
  }
  const timeStamp = integerOption(values.timestamp, 'timestamp', HELP);
  const credentials = resolveCredentials(values, io, HELP);
  const application = credentials.config?.applications.find((a) => a.appCode === credentials.appCode);
  const optionVersion = values['sign-version'];
  if (optionVersion !== undefined && optionVersion !== '1' && optionVersion !== '2') {
    throw new UsageError('--sign-version must be 1 or 2', HELP);
  }
  const signatureVersion = optionVersion === undefined ? (application?.signatureVersion ?? 1) : Number(optionVersion);
  if (!values.curl && signatureVersion === 2) {
    // Version 2 signs the operation and the body: the headers are only good with this exact body.
    const { route, datasetCode, body } = requestOf(values, credentials, HELP);
    const bodyText = JSON.stringify(body);
    const headers = {
      'Content-Type': 'application/json',
      ...signedHeaders({ ...credentials, datasetCode, timeStamp }, { path: route.path, bodyText }),
    };
    io.out(
      values.json
        ? `${JSON.stringify({ headers, path: route.path, body: bodyText }, null, 2)}\n`
        : `${Object.entries(headers)
            .map(([name, value]) => `${name}: ${value}\n`)
            .join('')}\nPOST ${route.path} with exactly this body:\n${bodyText}\n`,
    );
    return;
  }
  if (!values.curl) {
    for (const name of ['op', 'body', 'url'] as const) {
      if (values[name] !== undefined) throw new UsageError(`--${name} goes with --curl`, HELP);
    }
    const headers = signedHeaders({ ...credentials, datasetCode: values.dataset, timeStamp });
    if (values.dataset === undefined) {
      io.err(
        'das sign: no --dataset, so no X-Dataset-Code: these headers sign a request without a dataset (execute-sql); ' +
          'a data operation needs --dataset <code>\n',
      );
    }
    io.out(
      values.json
        ? `${JSON.stringify(headers, null, 2)}\n`
        : Object.entries(headers)
            .map(([name, value]) => `${name}: ${value}\n`)
            .join(''),
    );
    return;
  }
  const { route, datasetCode, body } = requestOf(values, credentials, HELP);
  const baseUrl = serviceUrl(values.url, io).replace(/\/+$/, '');
  io.out(
    `${signedCurl({ baseUrl, path: route.path, ...credentials, datasetCode, body, signatureVersion: signatureVersion === 2 ? 2 : 1, ...(timeStamp === undefined ? {} : { timeStamp }) })}\n`,
  );
}

/** The operation, dataset and body a signed request will carry, from --op, --dataset and --body. */
function requestOf(
  values: { op?: string | undefined; dataset?: string | undefined; body?: string | undefined },
  credentials: ReturnType<typeof resolveCredentials>,
  help: string,
) {
  const route = routeFor(operationName(values.op ?? 'get-list', help));
  // As `npm run sign` always did: a data operation without --dataset uses the application's first grant.
  const firstGrant = credentials.config?.applications.find((a) => a.appCode === credentials.appCode)?.grants?.[0];
  const datasetCode = values.dataset ?? (route.requiresDataset ? firstGrant?.datasetCode : undefined);
  if (route.requiresDataset && !datasetCode) throw new UsageError(`--dataset is required for ${route.operation}`, help);
  const batch = route.operation === 'batch-create';
  let extra: Record<string, unknown> = {};
  let records: unknown[] = [];
  if (values.body !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(values.body);
    } catch {
      throw new UsageError('--body must be JSON', help);
    }
    if (batch) {
      if (!Array.isArray(parsed)) throw new UsageError('--body must be a JSON array of records for batch-create', help);
      records = parsed;
    } else if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new UsageError('--body must be a JSON object', help);
    } else {
      extra = parsed as Record<string, unknown>;
    }
  }
  const body = batch
    ? { appCode: credentials.appCode, datasetCode, paramList: records }
    : route.requiresDataset
      ? { appCode: credentials.appCode, datasetCode, paramMap: extra }
      : { appCode: credentials.appCode, ...(datasetCode ? { datasetCode } : {}), ...extra };
  return { route, datasetCode, body };
}
