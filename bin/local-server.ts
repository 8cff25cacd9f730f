/**
 * `npm start`: the whole service on this machine with no cloud account (docs/interface.md §10). The same operation
 * handlers as in Lambda, behind an HTTP server that speaks API Gateway's proxy events, over an embedded
 * DynamoDB-compatible store (dynalite) and the file-backed key store.
 *
 *   npm start -- [--config <file>] [--port <n>] [--data-dir <dir>] [--dynamodb-endpoint <url>] [--log text|json] [--quiet]
 *                [--webhook-retry-scale <factor>] [--sql-engine embedded|mysql://user:password@host:port/db]
 *
 * With --dynamodb-endpoint the service runs against that DynamoDB endpoint (moto's server, DynamoDB Local, ...)
 * in the region AWS_REGION names, instead of starting the embedded store.
 */
import { existsSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { signedCurl } from '../packages/client/src/cli/signed-curl';
import { createDocumentClient } from '../shared/aws/dynamodb';
import type { CatalogConfig } from '../shared/catalog/schema';
import { applyConfiguration } from '../shared/catalog-store/catalog-store';
import { type ConfigurationPlan, describeConfigurationPlan } from '../shared/catalog-store/configuration-change';
import { ConfigError, loadConfigFile } from '../shared/catalog-store/load-config';
import { createIndexJobs, INDEX_JOB_PAGE_SIZE, RECORDS_PER_SEGMENT } from '../shared/composition/index-job-task';
import { operationRoutes } from '../shared/contract/client-routes';
import { settleWindow } from '../shared/indexing/index-jobs';
import { LocalIndexRunner } from '../shared/indexing/local-index-runner';
import { indexJobWorkOf, logIndexJobWork, setLogSink } from '../shared/observability/request-log';
import { endpointTarget } from '../shared/runtime/environment';
import { startSandboxes } from '../shared/sandbox/sandbox';
import { DEFAULT_SETTLE_MS } from '../shared/storage/event-store';
import { ScannedExpiry } from '../shared/storage/expired-items';
import { TABLES } from '../shared/storage/table-definitions';
import { deleteTables, ensureTables, localTableNames } from '../shared/storage/table-setup';
import { DEFAULT_CONFIG } from './local/default-config';
import { docsPages } from './local/docs-pages';
import { connectDynamo, type ExternalDynamoOptions, startEmbeddedDynamo } from './local/embedded-dynamo';
import { createLambdaHttpServer, type ProxyHandler } from './local/lambda-http';
import { type LocalChangeLog, startLocalChangeLog } from './local/local-change-log';
import { startLocalExpiry } from './local/local-expiry';
import { type LocalMirror, startLocalMirror } from './local/local-mirror';
import { type LocalStoreAddress, recordLocalServiceUrl } from './local/service-address';
import { createTerminalLog } from './local/terminal-log';

export { DEFAULT_CONFIG };

export interface LocalServerOptions {
  configFile?: string;
  /** 0 picks a free port. */
  port?: number;
  host?: string;
  /** Where records persist; without it the store lives in memory and is gone when the server stops. */
  dataDir?: string;
  /** Another DynamoDB endpoint to run against instead of the embedded store (dataDir is then unused). */
  dynamodb?: ExternalDynamoOptions;
  /** Prefix of the table names (default `das-local`). */
  tablePrefix?: string;
  /** Delete the tables when the server stops (tests on a shared endpoint). */
  dropTablesOnClose?: boolean;
  /** Where the request log lines go (default: standard output). */
  logSink?: (line: string) => void;
  /**
   * One short readable line per request (method, path, status, ms, units) to this writer instead of the JSON
   * lines: the terminal's log.
   */
  textLog?: (line: string) => void;
  /**
   * Every wait of the webhooks' retry schedule multiplied by this (default 1, the deployment's schedule); tests
   * shorten it (`--webhook-retry-scale 0.001` makes 5 s into 5 ms).
   */
  webhookRetryScale?: number;
  /**
   * How long after its position an event may still be written, so how far behind now the feed reads (default
   * 5000 ms; storage/event-store.ts). Tests shorten it.
   */
  changeSettleMs?: number;
  /**
   * The clock of the work beside the requests that goes by time (folds of per-value totals; default Date.now):
   * tests that drive the handlers' clock pass the same one.
   */
  clock?: () => number;
  /** How each route's handler is loaded (default: the TypeScript sources under functions/). */
  loadHandler?: (functionFile: string) => Promise<ProxyHandler | undefined>;
  /** Run the index jobs in this process (default); tests that drive them step by step turn it off. */
  runIndexJobs?: boolean;
  /** Index jobs: their writes a second, all segments together (default 1,000; 0 leaves them unpaced). */
  indexBuildWritesPerSecond?: number;
  /**
   * How long after a change the index runner makes itself every handler serves it (ms): the handlers cache the
   * catalog a second here (default: the settle window of that cache time).
   */
  indexSettleMs?: number;
  /**
   * Where custom SQL runs (docs/interface.md §20): `embedded` (the default) or `mysql://user:password@host:port/db`
   * (`?socketPath=…` for a Unix socket), MySQL itself over a mirror of the datasets this process keeps.
   */
  sqlEngine?: string;
  /** The MySQL mirror's backfill: records a second at most (default 2,000; 0 unpaced). */
  mirrorBackfillRecordsPerSecond?: number;
}

export interface LocalServer {
  url: string;
  port: number;
  config: CatalogConfig;
  configFile: string;
  /** Where its data is (the store's endpoint and the tables `das webhooks` reads). */
  store: LocalStoreAddress;
  /** What applying the configuration to the store did. */
  plan: ConfigurationPlan;
  /** Resolves when the index jobs have nothing left to do (or the server stopped). */
  indexJobs(): Promise<void>;
  /** Resolves once every change made so far is in the change log and every webhook delivery due now is made. */
  changesSettled(): Promise<void>;
  /** The MySQL mirror, when custom SQL runs on MySQL. */
  mirror?: LocalMirror;
  close(): Promise<void>;
}

/**
 * How long the local handlers cache the catalog: a change the index jobs make (a build complete) shows within a
 * second, and the jobs wait about half a minute, not a deployment's minutes, for every handler to serve one.
 */
const LOCAL_CATALOG_CACHE_MS = 1_000;

/** How often `npm start` removes expired items (the twin of DynamoDB's TTL), and its pause between pages (ms). */
const LOCAL_EXPIRY_EVERY_MS = 60 * 60_000;
const LOCAL_EXPIRY_PAUSE_MS = 100;
const LOCAL_EXPIRY_FIRST_MS = 5 * 60_000;

/** Segments an index job works on at once inside `npm start`, and how long each turn lasts. */
const LOCAL_INDEX_CONCURRENCY = 2;
const LOCAL_SEGMENT_TURN_MS = 250;
const LOCAL_MAX_SEGMENTS = 8;

async function loadSourceHandler(functionFile: string): Promise<ProxyHandler | undefined> {
  const file = path.join(__dirname, '..', 'functions', functionFile);
  if (!existsSync(`${file}.ts`) && !existsSync(`${file}.js`)) return undefined;
  const module = (await import(file)) as { handler: ProxyHandler };
  return module.handler;
}

/**
 * Start the local service. The handlers read their configuration from the process environment at first use,
 * as in Lambda, so one process runs one local server.
 */
export async function startLocalServer(options: LocalServerOptions = {}): Promise<LocalServer> {
  const configFile = path.resolve(options.configFile ?? DEFAULT_CONFIG);
  const config = loadConfigFile(configFile);
  let dynamoDir: string | undefined;
  if (options.dataDir && !options.dynamodb) {
    dynamoDir = path.resolve(options.dataDir, 'dynamodb');
    mkdirSync(dynamoDir, { recursive: true });
  }
  const tables = localTableNames(options.tablePrefix ?? 'das-local');
  const dynamo = options.dynamodb
    ? connectDynamo(options.dynamodb)
    : await startEmbeddedDynamo(dynamoDir, [tables.Records as string]);
  const documents = createDocumentClient(dynamo.client);
  const changeSettleMs = options.changeSettleMs ?? DEFAULT_SETTLE_MS;
  const storeTables = { catalog: tables.Catalog as string, records: tables.Records as string };
  let plan: ConfigurationPlan;
  try {
    await ensureTables(dynamo.client, tables);
    // What the deploy-time custom resource does in AWS: the configuration is compared with the one applied last,
    // refused whole or applied. No handler of this process has read a catalog yet: nothing needs to settle.
    plan = (await applyConfiguration(documents, storeTables, config, { settleMs: 0, source: configFile })).plan;
  } catch (error) {
    await dynamo.close();
    throw error;
  }

  Object.assign(process.env, {
    RECORDS_TABLE: tables.Records,
    CATALOG_TABLE: tables.Catalog,
    QUOTA_TABLE: tables.Quota,
    EVENTS_TABLE: tables.Events,
    CHANGE_SETTLE_MS: String(changeSettleMs),
    KEY_STORE: 'file',
    KEY_FILE: configFile,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    CATALOG_CACHE_MS: String(LOCAL_CATALOG_CACHE_MS),
    ...(options.dynamodb ? { AWS_REGION: options.dynamodb.region } : {}),
    STAGE: 'local',
    CORS_ALLOW_ORIGIN: '*',
    SOLE_WRITER: 'true',
  });
  const terminalLog = options.textLog ? createTerminalLog(options.textLog) : undefined;
  if (terminalLog) setLogSink(terminalLog.logSink);
  else if (options.logSink) setLogSink(options.logSink);

  // The index jobs a deployment runs in Step Functions, run here by this process.
  const runner = new LocalIndexRunner(
    createIndexJobs(documents, storeTables, {
      writesPerSecond: options.indexBuildWritesPerSecond ?? 1_000,
      concurrency: LOCAL_INDEX_CONCURRENCY,
      maxSegments: LOCAL_MAX_SEGMENTS,
      recordsPerSegment: RECORDS_PER_SEGMENT,
      pageSize: INDEX_JOB_PAGE_SIZE,
      settleMs: options.indexSettleMs ?? settleWindow(LOCAL_CATALOG_CACHE_MS),
      // One process serves this store: a lease another name holds is left by a process that has ended.
      isRunning: async () => false,
    }),
    {
      concurrency: LOCAL_INDEX_CONCURRENCY,
      segmentBudgetMs: LOCAL_SEGMENT_TURN_MS,
      onSegment: (ref, run) =>
        logIndexJobWork(
          {
            step: 'segment',
            ...ref,
            ...run.counts,
            throttled: run.throttled,
            readUnits: run.meter.readUnits,
            writeUnits: run.meter.writeUnits,
            durationMs: 0,
          },
          'DataAccessService/local',
        ),
      onError: (error) =>
        logIndexJobWork(
          {
            ...indexJobWorkOf('next'),
            error: error instanceof Error ? `${error.name}: ${error.message}` : 'unknown',
          },
          'DataAccessService/local',
        ),
    },
  );
  const indexJobs = options.runIndexJobs === false ? Promise.resolve() : runner.start();

  const loadHandler = options.loadHandler ?? loadSourceHandler;
  const handlers = new Map<string, ProxyHandler>();
  let changeLog: LocalChangeLog | undefined;
  try {
    for (const route of operationRoutes()) {
      const handler = await loadHandler(route.functionFile);
      if (handler) handlers.set(route.operation, handler);
    }
    changeLog = await startLocalChangeLog({
      dynamo,
      documents,
      config,
      tables: {
        records: tables.Records as string,
        catalog: tables.Catalog as string,
        events: tables.Events as string,
      },
      ...(options.dynamodb ? { external: options.dynamodb } : {}),
      metricNamespace: 'DataAccessService',
      settleMs: changeSettleMs,
      ...(options.webhookRetryScale === undefined ? {} : { webhookRetryScale: options.webhookRetryScale }),
      ...(options.clock ? { clock: options.clock } : {}),
    });
  } catch (error) {
    await runner.stop();
    await dynamo.close();
    throw error;
  }
  const startedChangeLog = changeLog;
  let mirror: LocalMirror | undefined;
  if (options.sqlEngine !== undefined && options.sqlEngine !== 'embedded') {
    try {
      mirror = await startLocalMirror({
        url: options.sqlEngine,
        documents,
        tables: storeTables,
        changeLog: startedChangeLog,
        ...(options.mirrorBackfillRecordsPerSecond === undefined
          ? {}
          : { backfillRecordsPerSecond: options.mirrorBackfillRecordsPerSecond }),
      });
    } catch (error) {
      await runner.stop();
      await startedChangeLog.stop();
      await dynamo.close();
      throw error;
    }
  }
  // DynamoDB's TTL, which the embedded store lacks (another endpoint may have its own; the twin is harmless there).
  const expiry = startLocalExpiry(
    new ScannedExpiry(
      documents,
      TABLES.map((definition) => ({ name: tables[definition.logicalName] as string, definition })),
    ),
    {
      everyMs: LOCAL_EXPIRY_EVERY_MS,
      firstAfterMs: LOCAL_EXPIRY_FIRST_MS,
      pauseMs: LOCAL_EXPIRY_PAUSE_MS,
      clock: options.clock ?? Date.now,
    },
  );
  // A deployed hooked function starts its sandbox at init; here the server's start stands for every init (the
  // handlers from source share this process's sandbox; bundles start their own as they load).
  if (!options.loadHandler && (config.hooks?.length ?? 0) > 0) await startSandboxes();
  const health = JSON.stringify({ status: 'ok', operations: [...handlers.keys()] });
  let url = '';
  const server = createLambdaHttpServer({
    handlers,
    pages: new Map([
      ['/health', () => ({ contentType: 'application/json', body: health })],
      ...docsPages(
        () => url,
        () => config.applications,
      ),
    ]),
    ...(terminalLog ? { onResponse: terminalLog.onResponse } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3000, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  url = `http://${options.host ?? '127.0.0.1'}:${port}`;
  return {
    url,
    port,
    config,
    configFile,
    store: {
      endpoint: dynamo.endpoint,
      region: options.dynamodb?.region ?? 'local',
      credentialsConfigured: options.dynamodb?.credentialsConfigured ?? false,
      tables: { catalog: tables.Catalog as string, events: tables.Events as string },
    },
    plan,
    indexJobs: () => indexJobs,
    changesSettled: () => startedChangeLog.settled(),
    ...(mirror ? { mirror } : {}),
    close: async () => {
      await expiry.stop();
      await runner.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await mirror?.stop();
      await startedChangeLog.stop();
      if (options.dropTablesOnClose) await deleteTables(dynamo.client, tables);
      await dynamo.close();
    },
  };
}

/** The first request to try: get-list on the first dataset the first application with keys may read. */
export function firstRequestExample(server: LocalServer): string | undefined {
  for (const app of server.config.applications) {
    const grant = app.grants?.find((g) => g.operations.includes('read'));
    const accessKey = Array.isArray(app.accessKey) ? app.accessKey[0] : app.accessKey;
    const secret = app.signingSecret ?? server.config.defaultSigningSecret;
    if (!grant || !accessKey || !secret) continue;
    return signedCurl({
      baseUrl: server.url,
      path: '/openapi/data/get-list',
      appCode: app.appCode,
      datasetCode: grant.datasetCode,
      accessKey,
      secret,
      body: { appCode: app.appCode, datasetCode: grant.datasetCode, paramMap: { currentPage: 1, pageSize: 10 } },
    });
  }
  return undefined;
}

/**
 * The command line of `npm start` and `das serve`: parse the options, start, print where and how to call it,
 * stop on SIGINT/SIGTERM. `command` is how the caller spelled the command, for the usage text.
 */
export async function runServe(args: string[] = process.argv.slice(2), command = 'npm start --'): Promise<void> {
  // The functions run on Node.js 22 in Lambda; on an older local Node the SDK's upgrade notice is noise.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const { values } = parseArgs({
    args,
    options: {
      config: { type: 'string' },
      port: { type: 'string' },
      'data-dir': { type: 'string' },
      'dynamodb-endpoint': { type: 'string' },
      log: { type: 'string' },
      quiet: { type: 'boolean' },
      'webhook-retry-scale': { type: 'string' },
      'sql-engine': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(
      `Usage: ${command} [--config <file>] [--port <n>] [--data-dir <dir>] [--dynamodb-endpoint <url>] [--log text|json] [--quiet] [--webhook-retry-scale <factor>] [--sql-engine embedded|mysql://…]\n` +
        '  --config             configuration file (default: config/demo.json)\n' +
        '  --port               HTTP port (default: 3000)\n' +
        '  --data-dir           where records persist (default: .data); a fresh directory is a fresh store\n' +
        '  --dynamodb-endpoint  run against this DynamoDB endpoint (e.g. moto, DynamoDB Local) instead of the\n' +
        '                       embedded store, in the region AWS_REGION names; tables das-local-* are created there\n' +
        '  --log                text: one short line per request (the default on a terminal);\n' +
        '                       json: the JSON lines a deployment writes (the default when output is not a terminal)\n' +
        '  --quiet              do not print the request log lines\n' +
        "  --webhook-retry-scale  multiply every wait of the webhooks' retry schedule (5 s, 5 min, ... 24 h) by this\n" +
        '                       factor, e.g. 0.001 to watch a whole schedule in minutes (default 1)\n' +
        '  --sql-engine         where custom SQL runs: embedded (default) or mysql://user:password@host:port/db\n' +
        '                       (MySQL 8 or MariaDB over a mirror of the datasets; ?socketPath=… for a Unix socket);\n' +
        '                       DAS_SQL_ENGINE says the same, the flag wins\n',
    );
    return;
  }
  const port = values.port === undefined ? 3000 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be 0 to 65535, not ${values.port}`);
  const endpoint = values['dynamodb-endpoint'];
  if (endpoint !== undefined && !/^https?:\/\/\S+$/.test(endpoint)) {
    throw new Error(`--dynamodb-endpoint must be an http(s) URL, not ${endpoint}`);
  }
  if (values.log !== undefined && values.log !== 'text' && values.log !== 'json')
    throw new Error(`--log must be text or json, not ${values.log}`);
  const retryScale = values['webhook-retry-scale'] === undefined ? undefined : Number(values['webhook-retry-scale']);
  if (retryScale !== undefined && !(retryScale > 0 && retryScale <= 1)) {
    throw new Error(
      `--webhook-retry-scale must be a number above 0 and at most 1, not ${values['webhook-retry-scale']}`,
    );
  }
  // The flag wins over the environment (read here, where the command line is read).
  const sqlEngine = values['sql-engine'] ?? (process.env.DAS_SQL_ENGINE || undefined);
  if (sqlEngine !== undefined && sqlEngine !== 'embedded' && !sqlEngine.startsWith('mysql://')) {
    throw new Error(`--sql-engine must be embedded or mysql://user:password@host:port/db, not ${sqlEngine}`);
  }
  const log = values.quiet ? 'none' : (values.log ?? (process.stdout.isTTY ? 'text' : 'json'));
  const writeLine = (line: string) => process.stdout.write(`${line}\n`);
  const server = await startLocalServer({
    configFile: values.config,
    port,
    dataDir: values['data-dir'] ?? '.data',
    ...(endpoint
      ? {
          dynamodb: { endpoint, ...endpointTarget() },
        }
      : {}),
    ...(log === 'none' ? { logSink: () => undefined } : {}),
    ...(log === 'text' ? { textLog: writeLine } : {}),
    ...(retryScale === undefined ? {} : { webhookRetryScale: retryScale }),
    ...(sqlEngine === undefined ? {} : { sqlEngine }),
  });
  const forgetAddress = recordLocalServiceUrl(server.url, server.store, server.mirror ? sqlEngine : undefined);
  // Ctrl-C signals the terminal's whole process group, and npm passes the same signal on to this process once more:
  // the second must not take the default action (dying mid-stop, with the store unclosed), so every signal after
  // the first is ignored while the stop, bounded, completes. Set before the banner: whoever reads it may stop us.
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    forgetAddress();
    setTimeout(() => process.exit(1), 5_000).unref();
    server.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const example = firstRequestExample(server);
  process.stdout.write(
    [
      `Data access service listening on ${server.url}`,
      `Other shells reach it with: export DAS_URL=${server.url}   (das and npm run sign in this checkout find it)`,
      `Configuration: ${server.configFile} (${server.config.applications.length} applications, ${server.config.datasets.length} datasets, ${server.config.queries?.length ?? 0} queries)`,
      ...(server.plan.first || server.plan.datasets.every((d) => d.change === 'unchanged')
        ? []
        : [
            'Changes from the configuration applied last (indexes build in the background; das indexes shows them):',
            ...describeConfigurationPlan(server.plan),
          ]),
      endpoint
        ? `Records are in the tables das-local-* at ${endpoint} (region ${endpointTarget().region})`
        : `Records persist in ${path.resolve(values['data-dir'] ?? '.data')}`,
      server.mirror
        ? `Custom SQL runs on MySQL (database ${server.mirror.database}), over a mirror kept from the change log`
        : 'Custom SQL runs on the embedded engine (--sql-engine mysql://… runs it on MySQL)',
      `Health: curl ${server.url}/health`,
      `API reference: ${server.url}/docs (OpenAPI document: ${server.url}/openapi.json)`,
      '',
      ...(example
        ? [
            'A first signed request (the token is valid for 10 minutes; `npm run sign` makes a fresh one):',
            '',
            example,
            '',
          ]
        : [
            'No application in the configuration has local keys (accessKey, signingSecret) to sign an example with.',
            '',
          ]),
    ].join('\n'),
  );
}

if (require.main === module) {
  runServe().catch((error: unknown) => {
    if (error instanceof ConfigError) process.stderr.write(`Configuration refused.\n${error.message}\n`);
    else process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  });
}
