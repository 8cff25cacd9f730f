/**
 * Integration test harness: the real local server (real handlers, real HTTP, in-process dynalite) and a
 * client that signs requests the way existing clients do. One server per test file (one process).
 *
 * With DAS_TEST_DYNAMODB_ENDPOINT set (e.g. to moto's server, as CI does), the server runs against that endpoint
 * in the region AWS_REGION names, with tables of its own (unique names, deleted when it stops), so test files can
 * share one endpoint.
 */
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type LocalServer, type LocalServerOptions, startLocalServer } from '../../bin/local-server';
import { signRequest } from '../../packages/client/src/signature';
import { createDocumentClient, endpointClientConfig } from '../../shared/aws/dynamodb';
import { endpointTarget, environment } from '../../shared/runtime/environment';
import { bundleLoader, captureLogLines } from './synthesized-bundles';

export const FIXTURE_CONFIG = path.join(__dirname, '..', 'fixtures', 'service-config.json');

export interface AppCredentials {
  appCode: string;
  accessKey: string;
  secret: string;
}

export const MAIN_APP: AppCredentials = {
  appCode: 'app-main',
  accessKey: 'ak-main-current-0001',
  secret: 'sk-main-secret-value',
};

export interface CallOptions {
  app?: AppCredentials;
  datasetCode?: string | null;
  /** Overrides of the signed headers (applied after signing). */
  headers?: Record<string, string | undefined>;
  timeStamp?: number;
  /** Sign for another dataset than the one sent. */
  signDatasetCode?: string;
  /** Send this raw text as the body instead of JSON. */
  rawBody?: string;
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: {
    success: boolean;
    msg: string | null;
    // biome-ignore lint/suspicious/noExplicitAny: tests read whatever shape the operation answers
    data: any;
    errorCode?: number;
    errorMsg?: string;
  };
}

export interface HarnessOptions {
  /**
   * How the server loads each route's handler. Tests that drive the clock build the real handlers with
   * `createHandler(operation, { now })`; tests that need a slow request register a test-only operation
   * through the same pipeline. Default: the handlers under functions/.
   */
  loadHandler?: LocalServerOptions['loadHandler'];
  /** A `cdk synth` output folder whose Lambda bundles to run. Default: HANDLER_BUNDLES_DIR, else the sources. */
  bundlesDir?: string;
  /**
   * Run the handlers under functions/ even when HANDLER_BUNDLES_DIR is set: for a fixture whose configuration
   * differs from the one the bundles were synthesized with in what the bundles carry (the hook sandbox ships only
   * beside the bundles of the operations that configuration hooks).
   */
  sources?: boolean;
  /** Run the local server's index jobs (default); a test that drives them step by step turns them off. */
  indexJobs?: boolean;
  /** The clock of the local server's work beside the requests (bin/local-server.ts `clock`). */
  clock?: () => number;
  /** The local server's change settle time and webhook retry scale (bin/local-server.ts). */
  changeSettleMs?: number;
  webhookRetryScale?: number;
  /** Where custom SQL runs (bin/local-server.ts `sqlEngine`): a `mysql://` URL runs it on MySQL. */
  sqlEngine?: string;
}

/** The DynamoDB endpoint the integration tests run against instead of the embedded store, if any. */
export const TEST_DYNAMODB_ENDPOINT = process.env.DAS_TEST_DYNAMODB_ENDPOINT || undefined;

/**
 * Table names of this test file on a shared endpoint: unique per file (jest runs files in parallel processes),
 * the same for every server of the file, because the handlers read the table names once per module load.
 */
const TEST_TABLE_PREFIX = `das-test-${process.pid}-${Date.now().toString(36)}`;

export class ServiceHarness {
  readonly logLines: Record<string, unknown>[] = [];
  /** The synthesized bundle files the server loaded (when it runs bundles). */
  readonly loadedBundles: string[] = [];
  private server: LocalServer | undefined;
  private store: DynamoDBDocumentClient | undefined;
  private restoreStdout: (() => void) | undefined;

  constructor(
    private readonly configFile = FIXTURE_CONFIG,
    private readonly options: HarnessOptions = {},
  ) {}

  async start(): Promise<this> {
    const sink = (line: string) => this.logLines.push(JSON.parse(line));
    // `npm run test:bundles`: the synthesized Lambda bundles instead of the sources, unless a test brings its
    // own handlers (a driven clock, a test-only operation).
    const bundles =
      this.options.loadHandler || this.options.sources
        ? undefined
        : (this.options.bundlesDir ?? process.env.HANDLER_BUNDLES_DIR);
    if (bundles) this.restoreStdout = captureLogLines(sink);
    this.server = await startLocalServer({
      configFile: this.configFile,
      port: 0,
      logSink: sink,
      ...(this.options.indexJobs === false ? { runIndexJobs: false } : {}),
      ...(this.options.changeSettleMs === undefined ? {} : { changeSettleMs: this.options.changeSettleMs }),
      ...(this.options.webhookRetryScale === undefined ? {} : { webhookRetryScale: this.options.webhookRetryScale }),
      ...(this.options.clock ? { clock: this.options.clock } : {}),
      ...(this.options.sqlEngine === undefined ? {} : { sqlEngine: this.options.sqlEngine }),
      loadHandler:
        this.options.loadHandler ??
        (bundles ? bundleLoader(bundles, (file) => this.loadedBundles.push(file)) : undefined),
      ...(TEST_DYNAMODB_ENDPOINT
        ? {
            dynamodb: { endpoint: TEST_DYNAMODB_ENDPOINT, ...endpointTarget() },
            tablePrefix: TEST_TABLE_PREFIX,
            dropTablesOnClose: true,
          }
        : {}),
    });
    return this;
  }

  async stop(): Promise<void> {
    this.store?.destroy();
    await this.server?.close();
    this.restoreStdout?.();
  }

  /** A client of the server's store (embedded or not) and its table names, to prepare or inspect items directly. */
  dynamo(): { client: DynamoDBDocumentClient; tables: { quota: string; records: string; catalog: string } } {
    const env = environment();
    this.store ??= createDocumentClient(
      new DynamoDBClient(
        endpointClientConfig(
          env.dynamodbEndpoint as string,
          env.dynamodbRegion ?? 'local',
          env.awsCredentialsConfigured,
        ),
      ),
    );
    return {
      client: this.store,
      tables: { quota: env.quotaTable, records: env.recordsTable, catalog: env.catalogTable },
    };
  }

  /** Resolves once every change made so far is in the change log and every webhook delivery due now is made. */
  changesSettled(): Promise<void> {
    if (!this.server) throw new Error('harness not started');
    return this.server.changesSettled();
  }

  get url(): string {
    if (!this.server) throw new Error('harness not started');
    return this.server.url;
  }

  /** POST a signed request; `body` is sent as JSON (with appCode and datasetCode filled in when absent). */
  async call(route: string, body: Record<string, unknown>, options: CallOptions = {}): Promise<CallResult> {
    const app = options.app ?? MAIN_APP;
    const datasetCode =
      options.datasetCode === null ? undefined : (options.datasetCode ?? (body.datasetCode as string));
    const timeStamp = String(options.timeStamp ?? Date.now());
    const token = signRequest(
      {
        accessKey: app.accessKey,
        appCode: app.appCode,
        datasetCode: options.signDatasetCode ?? datasetCode,
        timeStamp,
      },
      app.secret,
    );
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'X-Time-Stamp': timeStamp,
      'X-App-Code': app.appCode,
      'X-Token': token,
    };
    if (datasetCode) headers['X-Dataset-Code'] = datasetCode;
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (value === undefined) delete headers[name];
      else headers[name] = value;
    }
    const payload = options.rawBody ?? JSON.stringify({ appCode: app.appCode, ...body });
    const response = await fetch(`${this.url}${route}`, { method: 'POST', headers, body: payload });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: JSON.parse(text) };
  }

  /** Shorthands for the data operations on one dataset. */
  create(datasetCode: string, paramMap: Record<string, unknown>, options?: CallOptions) {
    return this.call('/openapi/data/create', { datasetCode, paramMap }, options);
  }
  getOne(datasetCode: string, id: unknown, options?: CallOptions) {
    return this.call('/openapi/data/get-one', { datasetCode, paramMap: { id } }, options);
  }
  batchCreate(datasetCode: string, paramList: unknown, options?: CallOptions) {
    return this.call('/openapi/data/batch-create', { datasetCode, paramList }, options);
  }
  update(datasetCode: string, paramMap: Record<string, unknown>, options?: CallOptions) {
    return this.call('/openapi/data/update', { datasetCode, paramMap }, options);
  }
  /** A page of the change feed; `datasetCode` null: every dataset the caller may read. */
  changes(paramMap?: Record<string, unknown>, options?: CallOptions) {
    return this.call('/openapi/data/changes', paramMap ? { paramMap } : {}, { datasetCode: null, ...options });
  }
  getList(datasetCode: string, paramMap?: Record<string, unknown>, options?: CallOptions) {
    return this.call('/openapi/data/get-list', paramMap ? { datasetCode, paramMap } : { datasetCode }, options);
  }
}
