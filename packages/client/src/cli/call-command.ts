/**
 * `das call <operation>`: sign and send one request with the TypeScript client (so the CLI exercises the same
 * code callers use), print the envelope, and exit non-zero when it is a failure. With `--user-key` (or
 * DAS_USER_KEY) it sends a personal access key to the `/client/` path instead of signing (client-key mode).
 */
import { readFileSync } from 'node:fs';
import { RequestTimeoutError, TransportError } from '../errors.js';
import { createClient, type ServiceResponse } from '../index.js';
import { routeFor } from '../operations.js';
import { CommandFailure, type CommandIo, integerOption, parseCommandArgs, UsageError } from './cli-io.js';
import { CREDENTIAL_HELP, CREDENTIAL_OPTIONS, type CredentialOptions, resolveCredentials } from './credentials.js';
import { operationName } from './operation-names.js';
import { connectionHint, serviceUrl, URL_HELP } from './service-url.js';

const HELP = 'das call --help';

export const CALL_USAGE = `Usage: das call <operation> [--url <base>] [--app <appCode>] [--dataset <code>] [key options]
                [--param name=value]... [--param name:=<json>]... [--json '<object>'] [--sql <code|id>]
                [--file <records.json>] [--idempotency-key <key>] [--function <name>]

Operations: get-list, get-one, create, batch-create, update, execute-sql, aggregate (or getList, getOne, ...,
executeSql), and with a personal access key login-user-info and bff-endpoint. Prints the response envelope as JSON. Exit code 0 on
success, 1 on a failure envelope or no answer, 2 on a wrong command line. A 4001 is retried (up to 3 attempts)
after the Retry-After the service asks for.

${URL_HELP}
${CREDENTIAL_HELP}
  --user-key <key>    client-key mode: a personal access key (env DAS_USER_KEY), sent to the /client/ paths
                      instead of signing; --app (or DAS_APP_CODE) names its application
  --dataset <code>    the dataset (data operations; optional for execute-sql)
  --param name=value  a parameter as text; repeatable. Data operations: a paramMap entry;
                      execute-sql: a params entry
  --param name:=json  a parameter as a JSON value (number, boolean, null, array, object)
  --json '<object>'   the paramMap (data operations) or the body fields (execute-sql) as JSON;
                      --param entries are added to it
  --sql <code|id>     execute-sql: the registered query's sqlCode, or its numeric id
  --file <path>       batch-create: a JSON file holding the array of records (1 to 1000)
  --idempotency-key <key>
                      create, batch-create, update: sent as Idempotency-Key, so a repeat of the same command
                      answers the first answer instead of writing again; a 3001 or no answer is retried
  --function <name>   bff-endpoint: the backend function of the --app application whose description,
                      version and modified time to show
  --timeout <ms>      give up after this long (default 30000)

Examples:
  das call get-list --dataset orders --param status=new --param pageSize:=5
  das call get-one --dataset orders --param id=01JD5Y0RZ6W8Q4N3V2M1K0H9G8
  das call create --dataset orders --json '{"customer_id":"c-1","amount":12.5,"status":"new"}'
  das call batch-create --dataset orders --file records.json --idempotency-key load-2024-05-01
  das call execute-sql --sql revenue-by-status --param since="2024-01-01 00:00:00"
  das call aggregate --dataset orders --json '{"aggregate":[{"type":"SUM","column":"amount"}],"groupBy":["status"]}'
  das call login-user-info --user-key "$KEY"
  das call bff-endpoint --user-key "$KEY" --app app-demo --function mask-email
`;

function parseParam(text: string): [string, unknown] {
  const json = /^([^=:]+):=(.*)$/s.exec(text);
  if (json) {
    try {
      return [json[1] as string, JSON.parse(json[2] as string)];
    } catch {
      throw new UsageError(`--param ${json[1]}:= needs a JSON value, not '${json[2]}'`, HELP);
    }
  }
  const plain = /^([^=]+)=(.*)$/s.exec(text);
  if (!plain) throw new UsageError(`--param must be name=value or name:=<json>, not '${text}'`, HELP);
  return [plain[1] as string, plain[2]];
}

/** The records of a batch: a JSON file holding an array. The service checks the records themselves. */
function readRecordsFile(file: string | undefined): unknown[] {
  if (file === undefined) throw new UsageError('batch-create needs --file <records.json>', HELP);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`, HELP);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not valid JSON`, HELP);
  }
  if (!Array.isArray(parsed)) throw new UsageError(`${file} must hold a JSON array of records`, HELP);
  return parsed;
}

export async function runCall(args: string[], io: CommandIo): Promise<void> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      ...CREDENTIAL_OPTIONS,
      url: { type: 'string' },
      dataset: { type: 'string' },
      param: { type: 'string', multiple: true },
      json: { type: 'string' },
      sql: { type: 'string' },
      file: { type: 'string' },
      'idempotency-key': { type: 'string' },
      timeout: { type: 'string' },
      'user-key': { type: 'string' },
      function: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    HELP,
    true,
  );
  if (values.help) {
    io.out(CALL_USAGE);
    return;
  }
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? 'which operation? e.g. das call get-list'
        : `one operation only, not ${positionals.join(' ')}`,
      HELP,
    );
  }
  const userKey = values['user-key'] ?? (io.env.DAS_USER_KEY || undefined);
  if (/^login-?user-?info$/i.test(positionals[0] as string)) {
    await callLoginUserInfo(userKey, values, io);
    return;
  }
  if (/^bff-?endpoint$/i.test(positionals[0] as string)) {
    await callBffEndpoint(userKey, values, io);
    return;
  }
  if (values.function !== undefined) throw new UsageError('--function goes with bff-endpoint', HELP);
  const route = routeFor(operationName(positionals[0] as string, HELP));
  if (route.requiresDataset && !values.dataset)
    throw new UsageError(`--dataset is required for ${route.operation}`, HELP);
  if (values.sql !== undefined && route.requiresDataset) throw new UsageError('--sql goes with execute-sql', HELP);
  const timeoutMs = integerOption(values.timeout, 'timeout', HELP);

  let fields: Record<string, unknown> = {};
  if (values.json !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(values.json);
    } catch {
      throw new UsageError('--json must be valid JSON', HELP);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new UsageError('--json must be a JSON object', HELP);
    }
    fields = parsed as Record<string, unknown>;
  }
  const params = Object.fromEntries((values.param ?? []).map(parseParam));

  let body: Record<string, unknown>;
  if (route.operation === 'batch-create') {
    if (values.json !== undefined || values.param)
      throw new UsageError('batch-create takes its records from --file', HELP);
    body = { datasetCode: values.dataset, paramList: readRecordsFile(values.file) };
  } else if (values.file !== undefined) {
    throw new UsageError('--file goes with batch-create', HELP);
  } else if (route.requiresDataset) {
    body = { datasetCode: values.dataset, paramMap: { ...fields, ...params } };
  } else {
    body = { ...fields };
    if (values.dataset) body.datasetCode = values.dataset;
    if (values.sql !== undefined) {
      if (/^\d+$/.test(values.sql)) body.id = Number(values.sql);
      else body.sqlCode = values.sql;
    }
    if (Object.keys(params).length > 0) {
      body.params = { ...(body.params as Record<string, unknown> | undefined), ...params };
    }
  }

  const baseUrl = serviceUrl(values.url, io);
  const client = createClient({
    baseUrl,
    ...callerOptions(userKey, values, io),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
  const key = values['idempotency-key'];
  await printEnvelope(
    () =>
      client.send(route.operation, body, {
        datasetCode: values.dataset,
        ...(key === undefined ? {} : { idempotencyKey: key }),
      }),
    baseUrl,
    io,
  );
}

/** Who calls: a personal access key (client-key mode) with its application, or an application's signing keys. */
function callerOptions(
  userKey: string | undefined,
  values: CredentialOptions,
  io: CommandIo,
): { appCode: string; userKey: string } | { appCode: string; accessKey: string; signingSecret: string } {
  if (userKey) {
    const appCode = values.app ?? (io.env.DAS_APP_CODE || undefined);
    if (!appCode) throw new UsageError('--user-key needs --app (or DAS_APP_CODE): the application of the key', HELP);
    if (values.key !== undefined || values.secret !== undefined) {
      throw new UsageError('--user-key replaces --key and --secret: use one or the other', HELP);
    }
    return { appCode, userKey };
  }
  const credentials = resolveCredentials(values, io, HELP, 'or --user-key (DAS_USER_KEY) for a personal access key');
  return { appCode: credentials.appCode, accessKey: credentials.accessKey, signingSecret: credentials.secret };
}

/** GET /client/user/loginUserInfo: the key alone says who calls, so no --app is needed. */
async function callLoginUserInfo(
  userKey: string | undefined,
  values: { url?: string | undefined },
  io: CommandIo,
): Promise<void> {
  if (!userKey) throw new UsageError('login-user-info needs a personal access key: --user-key or DAS_USER_KEY', HELP);
  const baseUrl = serviceUrl(values.url, io);
  const client = createClient({ baseUrl, appCode: '', userKey });
  await printEnvelope(() => client.send('login-user-info', {}), baseUrl, io);
}

/** GET /client/bff/endpoint/{appCode}/{functionName}: a function of the key's application, named by --function. */
async function callBffEndpoint(
  userKey: string | undefined,
  values: CredentialOptions & { url?: string | undefined; function?: string | undefined; timeout?: string | undefined },
  io: CommandIo,
): Promise<void> {
  if (!userKey) throw new UsageError('bff-endpoint needs a personal access key: --user-key or DAS_USER_KEY', HELP);
  if (!values.function) throw new UsageError('bff-endpoint needs --function <name>: the backend function', HELP);
  const timeoutMs = integerOption(values.timeout, 'timeout', HELP);
  const baseUrl = serviceUrl(values.url, io);
  const client = createClient({
    baseUrl,
    ...callerOptions(userKey, values, io),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
  const functionName = values.function;
  await printEnvelope(() => client.send('bff-endpoint', { functionName }), baseUrl, io);
}

/** Print the envelope; a failure envelope or no answer exits 1. */
async function printEnvelope(call: () => Promise<ServiceResponse>, baseUrl: string, io: CommandIo): Promise<void> {
  try {
    const response = await call();
    io.out(`${JSON.stringify(response.envelope, null, 2)}\n`);
    if (!response.envelope.success) {
      throw new CommandFailure(
        `HTTP ${response.httpStatus}${response.requestId ? `, request id ${response.requestId}` : ''}`,
      );
    }
  } catch (error) {
    if (error instanceof TransportError && error.httpStatus === undefined && !(error instanceof RequestTimeoutError))
      throw new CommandFailure(connectionHint(baseUrl, error));
    if (error instanceof RequestTimeoutError || error instanceof TransportError)
      throw new CommandFailure(error.message);
    throw error;
  }
}
