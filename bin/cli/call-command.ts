/**
 * `das call <operation>`: sign and send one request with the TypeScript client (so the CLI exercises the same
 * code callers use), print the envelope, and exit non-zero when it is a failure.
 */
import { createClient, RequestTimeoutError, TransportError } from '../../client';
import { routeFor } from '../../shared/contract/routes';
import { CommandFailure, type CommandIo, integerOption, parseCommandArgs, UsageError } from './cli-io';
import { CREDENTIAL_HELP, CREDENTIAL_OPTIONS, resolveCredentials } from './credentials';
import { operationName } from './operation-names';

const HELP = 'das call --help';

export const CALL_USAGE = `Usage: das call <operation> [--url <base>] [--app <appCode>] [--dataset <code>] [key options]
                [--param name=value]... [--param name:=<json>]... [--json '<object>'] [--sql <code|id>]

Operations: get-list, get-one, create, update, execute-sql (or getList, getOne, ..., executeSql).
Prints the response envelope as JSON. Exit code 0 on success, 1 on a failure envelope or no answer, 2 on a
wrong command line. A 4001 is retried (up to 3 attempts) after the Retry-After the service asks for.

  --url <base>        the service (env DAS_URL; default http://127.0.0.1:3000)
${CREDENTIAL_HELP}
  --dataset <code>    the dataset (data operations; optional for execute-sql)
  --param name=value  a parameter as text; repeatable. Data operations: a paramMap entry;
                      execute-sql: a params entry
  --param name:=json  a parameter as a JSON value (number, boolean, null, array, object)
  --json '<object>'   the paramMap (data operations) or the body fields (execute-sql) as JSON;
                      --param entries are added to it
  --sql <code|id>     execute-sql: the registered query's sqlCode, or its numeric id
  --timeout <ms>      give up after this long (default 30000)

Examples:
  das call get-list --dataset orders --param status=new --param pageSize:=5
  das call get-one --dataset orders --param id=01JD5Y0RZ6W8Q4N3V2M1K0H9G8
  das call create --dataset orders --json '{"customer_id":"c-1","amount":12.5,"status":"new"}'
  das call execute-sql --sql revenue-by-status --param since="2024-01-01 00:00:00"
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
      timeout: { type: 'string' },
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
  if (route.requiresDataset) {
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

  const credentials = resolveCredentials(values, io, HELP);
  const client = createClient({
    baseUrl: values.url ?? (io.env.DAS_URL || undefined) ?? 'http://127.0.0.1:3000',
    appCode: credentials.appCode,
    accessKey: credentials.accessKey,
    signingSecret: credentials.secret,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
  try {
    const response = await client.send(route.operation, body, { datasetCode: values.dataset });
    io.out(`${JSON.stringify(response.envelope, null, 2)}\n`);
    if (!response.envelope.success) {
      throw new CommandFailure(
        `HTTP ${response.httpStatus}${response.requestId ? `, request id ${response.requestId}` : ''}`,
      );
    }
  } catch (error) {
    if (error instanceof RequestTimeoutError || error instanceof TransportError)
      throw new CommandFailure(error.message);
    throw error;
  }
}
