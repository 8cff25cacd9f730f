/**
 * TypeScript client of the data access service. No AWS dependency: plain `fetch`, so it runs in Node.js 20+
 * and in browsers.
 *
 * - Server mode, `createClient({ baseUrl, appCode, accessKey, signingSecret })`: every request is signed with
 *   the same module the service verifies with (`./signature`, loaded on first use because it needs
 *   `node:crypto`).
 * - Browser mode, `createClient({ baseUrl, appCode, token })`: the access key must never reach a browser, so a
 *   trusted server mints `{token, timeStamp, expiresAt}` (`das token`, or `mintBrowserToken`) and the client
 *   only sends it.
 *
 * - Client-key mode, `createClient({ baseUrl, appCode, userKey })`: a person's access key (`das user-key create`)
 *   sent in `X-User-AK` to the `/client/` paths, for tools and scripts acting as that person; no signing. Not
 *   for browsers.
 *
 * Failure envelopes become typed errors (`./errors`); 4001 is retried with backoff, honouring `Retry-After`,
 * a bounded number of times; each attempt is aborted after `timeoutMs` (30 s, as docs/interface.md §7 advises).
 * A call with an `idempotencyKey` (create, batchCreate, update) is also retried after a 3001, a 2001 or no
 * answer at all: the service completes the first attempt instead of writing twice.
 */

import type { ChangeEvent, ChangesPage } from './change-events.js';
import { RequestTimeoutError, serviceCallError, TransportError } from './errors.js';
import {
  APP_CODE_HEADER,
  DATASET_CODE_HEADER,
  ETAG_HEADER,
  IDEMPOTENCY_KEY_HEADER,
  IF_MATCH_HEADER,
  NONCE_HEADER,
  SIGN_VERSION_HEADER,
  TIME_STAMP_HEADER,
  TOKEN_HEADER,
  USER_KEY_HEADER,
} from './headers.js';
import { BFF_ENDPOINT_ROUTE, LOGIN_USER_INFO_ROUTE, type OperationName, pathWith, routeIn } from './operations.js';
import type { SignatureInput } from './signature.js';
import type {
  AggregateParams,
  AggregateResult,
  BffEndpoint,
  DataRecord,
  GetListParams,
  ListResult as ListResultShape,
  LoginUserInfo,
  SqlParamValue,
  SqlResult as SqlResultShape,
} from './types.js';

// Signing needs node:crypto, so it is a subpath of its own (`/signature`, `/browser-token`): browser bundles of
// this entry never load it.
export * from './change-events.js';
export * from './errors.js';
export * from './headers.js';
export {
  type AuthMode,
  BFF_ENDPOINT_ROUTE,
  clientPathOf,
  LOGIN_USER_INFO_ROUTE,
  OPERATIONS,
  type OperationName,
  type OperationRoute,
  pathWith,
  routeFor,
  routeIn,
} from './operations.js';
export type { SignatureInput } from './signature.js';
export type * from './types.js';

/** A token minted by a trusted server for one application (and dataset), valid for 10 minutes. */
export interface PreSignedToken {
  token: string;
  timeStamp: string | number;
  /** Milliseconds since the epoch; informative, the service decides by `timeStamp`. */
  expiresAt?: number;
}

/** What a browser's token provider is asked for: the signature covers the dataset code when one is sent. */
export interface TokenRequest {
  operation: OperationName;
  appCode: string;
  datasetCode: string | undefined;
}

export type TokenProvider = (request: TokenRequest) => PreSignedToken | Promise<PreSignedToken>;

export interface RetryOptions {
  /** Attempts in all, the first included (default 3). 1 turns retrying off. */
  maxAttempts?: number;
  /** First backoff when the answer has no `Retry-After` (default 500 ms), doubled each time, with jitter. */
  baseDelayMs?: number;
  /** The longest wait the client accepts; a longer `Retry-After` fails at once (default 60 s). */
  maxDelayMs?: number;
}

interface CommonOptions {
  /** e.g. `https://api.example.com` or `http://127.0.0.1:3000`. */
  baseUrl: string;
  appCode: string;
  /** Per attempt (default 30 000 ms). */
  timeoutMs?: number;
  retry?: RetryOptions;
  /** Another fetch (a proxy agent, a test double). */
  fetch?: typeof fetch;
  /** The clock the timestamps are taken from (server mode). */
  now?: () => number;
}

export interface KeyClientOptions extends CommonOptions {
  accessKey: string;
  signingSecret: string;
  /**
   * 2 for an application configured with `signatureVersion: 2` (docs/interface.md §16): each request is also signed
   * over its body, method and path with a new nonce. Default 1.
   */
  signatureVersion?: 1 | 2;
  token?: never;
  userKey?: never;
}

export interface TokenClientOptions extends CommonOptions {
  token: TokenProvider;
  accessKey?: never;
  signingSecret?: never;
  signatureVersion?: never;
  userKey?: never;
}

/** Client-key mode: a personal access key, sent to the `/client/` paths (server-side tools only). */
export interface UserKeyClientOptions extends CommonOptions {
  userKey: string;
  accessKey?: never;
  signingSecret?: never;
  signatureVersion?: never;
  token?: never;
}

export type ClientOptions = KeyClientOptions | TokenClientOptions | UserKeyClientOptions;

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the client's timeout for this call. */
  timeoutMs?: number;
  /**
   * Sent as `Idempotency-Key` (1 to 255 printable ASCII characters; create, batch create, update): the service
   * answers a repeat of the same request with the first answer for 24 hours, so the call can be retried safely.
   */
  idempotencyKey?: string;
  /**
   * Sent as `If-Match: "<revision>"` (update): the update applies only while the record is at this revision (its
   * `ETag`, see `getOneWithRevision`); otherwise nothing is written and the call throws `PreconditionFailedError`.
   */
  ifMatch?: number;
}

/** The system fields every record has, with the dataset's fields `F`. */
export type RecordOf<F extends object = Record<string, unknown>> = F &
  Pick<DataRecord, 'id' | 'gmt_create' | 'gmt_modified'>;

export type ListResult<F extends object = Record<string, unknown>> = Omit<ListResultShape, 'tableData'> & {
  tableData: RecordOf<F>[];
};

export type SqlResult<Row extends object = Record<string, unknown>> = Omit<SqlResultShape, 'execResult'> & {
  execResult?: Row[];
};

/** A registered query: its `sqlCode`, or its numeric `id`. */
export type QueryRef = string | number | { sqlCode: string } | { id: number };

/** The envelope as received, success or failure, with what the HTTP layer said. */
export interface ServiceResponse {
  httpStatus: number;
  requestId: string | undefined;
  headers: Headers;
  envelope: {
    success: boolean;
    msg: string | null;
    data: unknown;
    errorCode?: number;
    errorMsg?: string;
  };
}

/** Where to start reading the change feed, and how many events a page holds (1 to 500, default 100). */
export interface ChangesParams {
  after?: string;
  limit?: number;
}

/** The change feed's events, page by page; `cursor` is where the feed stands after the last page read. */
export interface ChangeFeed extends AsyncIterable<ChangeEvent> {
  readonly cursor: string | undefined;
}

/** What a batch update answers: the ids in the order sent, and how many records the batch listed. */
export interface BatchUpdateResult {
  ids: string[];
  total: number;
}

export interface DataAccessClient {
  /** One page of the change feed (docs/interface.md §18): events of the datasets the caller may read. */
  changesPage(params?: ChangesParams, options?: CallOptions & { datasetCode?: string }): Promise<ChangesPage>;
  /**
   * Every event of the change feed after `params.after` (from the oldest kept without it), oldest first, until the
   * feed has no more; keep `feed.cursor` to resume from there later.
   */
  changes(params?: ChangesParams, options?: CallOptions & { datasetCode?: string }): ChangeFeed;
  getList<F extends object = Record<string, unknown>>(
    datasetCode: string,
    params?: GetListParams,
    options?: CallOptions,
  ): Promise<ListResult<F>>;
  getOne<F extends object = Record<string, unknown>>(
    datasetCode: string,
    id: string | number,
    options?: CallOptions,
  ): Promise<RecordOf<F>>;
  /** get-one with the record's revision (its `ETag`), for an update sent with `ifMatch`. */
  getOneWithRevision<F extends object = Record<string, unknown>>(
    datasetCode: string,
    id: string | number,
    options?: CallOptions,
  ): Promise<{ record: RecordOf<F>; revision: number }>;
  create<F extends object = Record<string, unknown>>(
    datasetCode: string,
    fields: Partial<F>,
    options?: CallOptions,
  ): Promise<RecordOf<F>>;
  update<F extends object = Record<string, unknown>>(
    datasetCode: string,
    id: string | number,
    changes: Partial<F>,
    options?: CallOptions,
  ): Promise<RecordOf<F>>;
  /**
   * Batch update: the same changes on 1 to 1000 records, all or nothing (docs/interface.md §21); answers the ids in
   * the order given and their number.
   */
  update<F extends object = Record<string, unknown>>(
    datasetCode: string,
    ids: readonly (string | number)[],
    changes: Partial<F>,
    options?: CallOptions,
  ): Promise<BatchUpdateResult>;
  /** 1 to 1000 new records; answers their ids in the order given. Nothing is written when any is refused. */
  batchCreate<F extends object = Record<string, unknown>>(
    datasetCode: string,
    records: Partial<F>[],
    options?: CallOptions,
  ): Promise<string[]>;
  /**
   * SUM, AVG, COUNT, MAX and MIN over the records the caller may read, grouped, filtered and paged
   * (docs/interface.md §21): one row per group in `tableData`.
   */
  aggregate(datasetCode: string, params: AggregateParams, options?: CallOptions): Promise<AggregateResult>;
  /** A failed SQL statement is not an error: it answers `execSuccess: false` with `execError`. */
  executeSql<Row extends object = Record<string, unknown>>(
    query: QueryRef,
    params?: Record<string, SqlParamValue>,
    options?: CallOptions & { datasetCode?: string },
  ): Promise<SqlResult<Row>>;
  /**
   * Send a body as it is (the `appCode` is filled in) and answer the envelope, failure included; retries and
   * the timeout apply. What the typed methods and `das call` are built on. A GET sends no body: its fields fill
   * the path's `{name}` segments instead (`send('bff-endpoint', { functionName })`).
   */
  send(
    operation: OperationName,
    body: Record<string, unknown>,
    options?: CallOptions & { datasetCode?: string },
  ): Promise<ServiceResponse>;
  /** Client-key mode only: the user the key belongs to (`GET /client/user/loginUserInfo`). */
  loginUserInfo(options?: CallOptions): Promise<LoginUserInfo>;
  /**
   * Client-key mode only: a backend function of the client's application, its description, version and modified
   * time (`GET /client/bff/endpoint/{appCode}/{functionName}`). A function the application does not declare is a
   * `NotFoundError` (2002).
   */
  bffEndpoint(functionName: string, options?: CallOptions): Promise<BffEndpoint>;
}

/** The revision an `ETag` header holds (`"3"` → 3). */
function revisionOf(etag: string | null): number {
  const match = /^(?:W\/)?"?(\d+)"?$/.exec(etag?.trim() ?? '');
  if (!match) throw new Error(`the service answered no record revision (ETag: ${etag ?? 'absent'})`);
  return Number(match[1]);
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_RETRY: Required<RetryOptions> = { maxAttempts: 3, baseDelayMs: 500, maxDelayMs: 60_000 };
const RATE_LIMITED = 4001;
/** Failures a retry with the same Idempotency-Key completes (docs/interface.md §13). */
const COMPLETED_BY_RETRY = new Set([2001, 3001]);

type Signer = (input: SignatureInput, secret: string) => string;
let signer: Promise<Signer> | undefined;

/** The service's own signing module, loaded only in server mode so browser bundles never evaluate node:crypto. */
function loadSigner(): Promise<Signer> {
  signer ??= import('./signature.js').then((module) => module.signRequest);
  return signer;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    function onAbort() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `Retry-After` in seconds (the service's form) or as an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function isEnvelope(value: unknown): value is ServiceResponse['envelope'] {
  return value !== null && typeof value === 'object' && typeof (value as { success?: unknown }).success === 'boolean';
}

export function createClient(options: ClientOptions): DataAccessClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const now = options.now ?? Date.now;
  const retry = { ...DEFAULT_RETRY, ...options.retry };
  if (!fetchImpl) throw new Error('no fetch available: pass options.fetch');
  if (!options.token && !options.userKey && !(options.accessKey && options.signingSecret)) {
    throw new Error(
      'createClient needs accessKey and signingSecret (server mode), token (browser mode) or userKey (client-key mode)',
    );
  }

  /** The request's authentication headers: a personal access key, or the four signed ones. */
  async function signedHeaders(operation: OperationName, datasetCode: string | undefined, payload: string) {
    if (options.userKey) return { 'Content-Type': 'application/json', [USER_KEY_HEADER]: options.userKey };
    let timeStamp: string;
    let token: string;
    const extra: Record<string, string> = {};
    if (options.token) {
      const minted = await options.token({ operation, appCode: options.appCode, datasetCode });
      timeStamp = String(minted.timeStamp);
      token = minted.token;
    } else {
      timeStamp = String(now());
      const input = {
        accessKey: options.accessKey as string,
        appCode: options.appCode,
        datasetCode,
        timeStamp,
      };
      if (options.signatureVersion === 2) {
        // WebCrypto, no node:crypto: the same signer a browser page can use.
        const v2 = await import('./signature-v2.js');
        const nonce = v2.newNonce();
        const route = routeIn(operation, 'signed');
        if (!route) throw new Error(`${operation} has no signed path`);
        token = await v2.signRequestV2Web(
          { ...input, bodySha256: await v2.sha256Hex(payload), method: route.method, nonce, path: route.path },
          options.signingSecret as string,
        );
        extra[SIGN_VERSION_HEADER] = '2';
        extra[NONCE_HEADER] = nonce;
      } else {
        const sign = await loadSigner();
        token = sign(input, options.signingSecret as string);
      }
    }
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      [TIME_STAMP_HEADER]: timeStamp,
      [APP_CODE_HEADER]: options.appCode,
      [TOKEN_HEADER]: token,
    };
    if (datasetCode) headers[DATASET_CODE_HEADER] = datasetCode;
    return { ...headers, ...extra };
  }

  /** Whether a failed attempt is worth another: rate limits always, failures of ours when a key makes it safe. */
  function retryable(response: ServiceResponse, idempotent: boolean): boolean {
    const code = response.envelope.errorCode;
    if (response.envelope.success || code === undefined) return false;
    return code === RATE_LIMITED || (idempotent && COMPLETED_BY_RETRY.has(code));
  }

  /** One HTTP exchange, aborted after the timeout (the body read included). */
  async function attempt(
    url: string,
    init: RequestInit,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<ServiceResponse> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const forwardAbort = () => controller.abort(signal?.reason);
    if (signal?.aborted) forwardAbort();
    signal?.addEventListener('abort', forwardAbort, { once: true });
    try {
      const response = await fetchImpl(url, { ...init, signal: controller.signal });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (!isEnvelope(parsed)) {
        throw new TransportError(
          `${url} answered HTTP ${response.status} without a service envelope: ${text.slice(0, 200)}`,
          response.status,
        );
      }
      return {
        httpStatus: response.status,
        requestId: response.headers.get('x-request-id') ?? undefined,
        headers: response.headers,
        envelope: parsed,
      };
    } catch (error) {
      if (timedOut) throw new RequestTimeoutError(timeoutMs);
      if (error instanceof TransportError || signal?.aborted) throw error;
      const reason = ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
      throw new TransportError(`request to ${url} failed: ${reason}`, undefined, { cause: error });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forwardAbort);
    }
  }

  async function send(
    operation: OperationName,
    body: Record<string, unknown>,
    callOptions: CallOptions & { datasetCode?: string } = {},
  ): Promise<ServiceResponse> {
    const route = routeIn(operation, options.userKey ? 'client' : 'signed');
    if (!route) throw new Error(`${operation} has no ${options.userKey ? 'client-key' : 'signed'} path`);
    const datasetCode =
      callOptions.datasetCode ?? (typeof body.datasetCode === 'string' ? body.datasetCode : undefined);
    const fields = { appCode: options.appCode, ...body };
    const payload = JSON.stringify(fields);
    const url = `${baseUrl}${pathWith(route.path, fields)}`;
    const timeoutMs = callOptions.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const attempts = Math.max(1, Math.floor(retry.maxAttempts));
    const idempotent = callOptions.idempotencyKey !== undefined;
    for (let n = 1; ; n += 1) {
      // Signed afresh each time: a retry may come minutes later, and the token is bound to its timestamp.
      const headers: Record<string, string> = await signedHeaders(operation, datasetCode, payload);
      if (idempotent) headers[IDEMPOTENCY_KEY_HEADER] = callOptions.idempotencyKey as string;
      if (callOptions.ifMatch !== undefined) headers[IF_MATCH_HEADER] = `"${callOptions.ifMatch}"`;
      let response: ServiceResponse;
      try {
        response = await attempt(
          url,
          route.method === 'GET' ? { method: 'GET', headers } : { method: route.method, headers, body: payload },
          timeoutMs,
          callOptions.signal,
        );
      } catch (error) {
        // No answer: without a key the request may or may not have run, so only a keyed one is sent again.
        const lost = error instanceof RequestTimeoutError || error instanceof TransportError;
        if (!idempotent || !lost || callOptions.signal?.aborted || n >= attempts) throw error;
        await sleep(Math.min(retry.baseDelayMs * 2 ** (n - 1), retry.maxDelayMs), callOptions.signal);
        continue;
      }
      if (!retryable(response, idempotent) || n >= attempts) return response;
      const asked = retryAfterMs(response.headers.get('retry-after'), Date.now());
      const backoff = retry.baseDelayMs * 2 ** (n - 1) * (0.5 + Math.random() / 2);
      const delay = asked ?? Math.min(backoff, retry.maxDelayMs);
      // Waiting longer than the caller allows helps nobody: hand the 4001 back now.
      if (delay > retry.maxDelayMs) return response;
      await sleep(delay, callOptions.signal);
    }
  }

  /** The data of a success envelope; the typed error of a failure. */
  function unwrap<T>(response: ServiceResponse): T {
    const { envelope } = response;
    if (envelope.success) return envelope.data as T;
    const retryAfter = response.headers.get('retry-after');
    throw serviceCallError({
      errorCode: typeof envelope.errorCode === 'number' ? envelope.errorCode : Number.NaN,
      errorMsg: envelope.errorMsg ?? 'the service answered a failure without a message',
      httpStatus: response.httpStatus,
      requestId: response.requestId,
      retryAfterSeconds: retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined,
    });
  }

  async function dataCall<T>(
    operation: OperationName,
    datasetCode: string,
    paramMap: object | undefined,
    callOptions: CallOptions | undefined,
  ): Promise<T> {
    const body = paramMap === undefined ? { datasetCode } : { datasetCode, paramMap };
    return unwrap<T>(await send(operation, body, { ...callOptions, datasetCode }));
  }

  const changesPage = async (
    params: ChangesParams = {},
    callOptions: CallOptions & { datasetCode?: string } = {},
  ): Promise<ChangesPage> => {
    const body: Record<string, unknown> = { paramMap: params };
    if (callOptions.datasetCode) body.datasetCode = callOptions.datasetCode;
    return unwrap<ChangesPage>(await send('changes', body, callOptions));
  };

  return {
    changesPage,
    changes(params = {}, callOptions = {}) {
      let cursor = params.after;
      return {
        get cursor() {
          return cursor;
        },
        async *[Symbol.asyncIterator]() {
          for (;;) {
            const page = await changesPage({ ...params, ...(cursor ? { after: cursor } : {}) }, callOptions);
            cursor = page.cursor;
            yield* page.events;
            if (!page.hasMore) return;
          }
        },
      };
    },
    getList: (datasetCode, params, callOptions) => dataCall('get-list', datasetCode, params ?? {}, callOptions),
    getOne: (datasetCode, id, callOptions) => dataCall('get-one', datasetCode, { id }, callOptions),
    async getOneWithRevision(datasetCode, id, callOptions) {
      const response = await send('get-one', { datasetCode, paramMap: { id } }, { ...callOptions, datasetCode });
      const record = unwrap<RecordOf>(response);
      return { record: record as never, revision: revisionOf(response.headers.get(ETAG_HEADER)) };
    },
    create: (datasetCode, fields, callOptions) => dataCall('create', datasetCode, fields, callOptions),
    update: (datasetCode, id, changes, callOptions) => dataCall('update', datasetCode, { ...changes, id }, callOptions),
    batchCreate: async (datasetCode, records, callOptions) =>
      unwrap<string[]>(
        await send('batch-create', { datasetCode, paramList: records }, { ...callOptions, datasetCode }),
      ),
    aggregate: (datasetCode, params, callOptions) => dataCall('aggregate', datasetCode, params, callOptions),
    async executeSql(query, params, callOptions = {}) {
      const ref = typeof query === 'string' ? { sqlCode: query } : typeof query === 'number' ? { id: query } : query;
      const body: Record<string, unknown> = { ...ref };
      if (params !== undefined) body.params = params;
      if (callOptions.datasetCode) body.datasetCode = callOptions.datasetCode;
      return unwrap(await send('execute-sql', body, callOptions));
    },
    send,
    async loginUserInfo(callOptions) {
      if (!options.userKey)
        throw new Error(`loginUserInfo needs a userKey: ${LOGIN_USER_INFO_ROUTE.path} is client-key mode only`);
      return unwrap(await send('login-user-info', {}, callOptions));
    },
    async bffEndpoint(functionName, callOptions) {
      if (!options.userKey)
        throw new Error(`bffEndpoint needs a userKey: ${BFF_ENDPOINT_ROUTE.path} is client-key mode only`);
      if (!options.appCode)
        throw new Error(`bffEndpoint needs the client's appCode: the application of the key and of the function`);
      return unwrap(await send('bff-endpoint', { functionName }, callOptions));
    },
  };
}
