/**
 * Key store adapter over AWS Secrets Manager: one secret per application (`<prefix>/apps/<appCode>`) and one
 * for the deployment's default secret. Values are cached in the container; each call has a timeout.
 *
 * No request waits for a refresh while a value is cached: past `cacheTtlMs` the cached value still answers and
 * one refresh runs beside the request. When Secrets Manager fails, the last good value keeps serving for up to
 * `maxStaleMs` after it was read, and refreshes back off (1 s, doubling to `maxBackoffMs`), so an outage costs
 * requests nothing until that bound. Without a usable value a request waits for at most one call; during the
 * back-off after a failed one it fails at once (the caller answers 3001 saying requests cannot be verified now).
 *
 * So a key removed from Secrets Manager keeps working in a warm container until the first request after
 * `cacheTtlMs` has refreshed it (5 minutes and one request by default), or, while Secrets Manager is failing,
 * for up to `maxStaleMs` (1 hour by default) after the last successful read.
 */
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { type ApplicationKeys, type KeyStore, parseApplicationSecret } from './key-store';

export interface SecretsManagerKeyStoreOptions {
  client: SecretsManagerClient;
  /** Application secret names are `<secretPrefix>/apps/<appCode>`. */
  secretPrefix: string;
  defaultSecretId: string;
  /** How long a fetched value is used before it is fetched again. */
  cacheTtlMs?: number;
  /** How long the last good value may serve while Secrets Manager fails. */
  maxStaleMs?: number;
  /** Timeout of one call to Secrets Manager. */
  callTimeoutMs?: number;
  /** Longest wait between refresh attempts while Secrets Manager fails (the first wait is 1 s). */
  maxBackoffMs?: number;
  now?: () => number;
}

interface CacheEntry<T> {
  value: T;
  fetchedAt: number;
}

/** An application whose secret does not exist: remembered briefly so that unknown keys do not hammer the store. */
const MISSING = Symbol('missing');

const FIRST_BACKOFF_MS = 1_000;

interface Failure {
  delayMs: number;
  retryAt: number;
}

export class SecretsManagerKeyStore implements KeyStore {
  private readonly cache = new Map<string, CacheEntry<string | typeof MISSING>>();
  private readonly inflight = new Map<string, Promise<string | typeof MISSING>>();
  /** Secrets whose last read failed, and when the next attempt may run. */
  private readonly failures = new Map<string, Failure>();
  private readonly ttl: number;
  private readonly maxStale: number;
  private readonly timeout: number;
  private readonly maxBackoff: number;
  private readonly now: () => number;

  constructor(private readonly options: SecretsManagerKeyStoreOptions) {
    this.ttl = options.cacheTtlMs ?? 5 * 60_000;
    this.maxStale = options.maxStaleMs ?? 60 * 60_000;
    this.timeout = options.callTimeoutMs ?? 2_000;
    this.maxBackoff = options.maxBackoffMs ?? 30_000;
    this.now = options.now ?? Date.now;
  }

  async applicationKeys(appCode: string): Promise<ApplicationKeys | undefined> {
    const text = await this.secret(`${this.options.secretPrefix}/apps/${appCode}`);
    return text === MISSING ? undefined : parseApplicationSecret(text);
  }

  async defaultSecret(): Promise<string> {
    const text = await this.secret(this.options.defaultSecretId);
    if (text === MISSING) throw new Error(`default signing secret ${this.options.defaultSecretId} does not exist`);
    const value = JSON.parse(text) as { signingSecret?: unknown };
    if (typeof value.signingSecret !== 'string' || value.signingSecret === '') {
      throw new Error('default signing secret has no signingSecret');
    }
    return value.signingSecret;
  }

  private async secret(id: string): Promise<string | typeof MISSING> {
    const cached = this.cache.get(id);
    const age = cached ? this.now() - cached.fetchedAt : Number.POSITIVE_INFINITY;
    if (cached && age < this.ttl) return cached.value;
    if (cached && age < this.maxStale) {
      this.refreshBeside(id);
      return cached.value;
    }
    const failure = this.failures.get(id);
    if (failure && this.now() < failure.retryAt) {
      throw new Error(`secret ${id} could not be read; the next attempt is in ${failure.retryAt - this.now()} ms`);
    }
    try {
      return await this.refresh(id);
    } catch (error) {
      throw new Error(`secret ${id} could not be read`, { cause: error });
    }
  }

  /** A refresh that no request waits for: at most one at a time, none during the back-off after a failure. */
  private refreshBeside(id: string): void {
    const failure = this.failures.get(id);
    if (this.inflight.has(id) || (failure && this.now() < failure.retryAt)) return;
    this.refresh(id).catch(() => undefined);
  }

  /**
   * One read per secret at a time, however many callers wait for it; its outcome updates the cache or the
   * back-off once.
   */
  private refresh(id: string): Promise<string | typeof MISSING> {
    let pending = this.inflight.get(id);
    if (!pending) {
      pending = this.fetch(id)
        .then(
          (value) => {
            this.cache.set(id, { value, fetchedAt: this.now() });
            this.failures.delete(id);
            return value;
          },
          (error: unknown) => {
            const previous = this.failures.get(id);
            const delayMs = previous ? Math.min(previous.delayMs * 2, this.maxBackoff) : FIRST_BACKOFF_MS;
            this.failures.set(id, { delayMs, retryAt: this.now() + delayMs });
            throw error;
          },
        )
        .finally(() => this.inflight.delete(id));
      this.inflight.set(id, pending);
    }
    return pending;
  }

  private async fetch(id: string): Promise<string | typeof MISSING> {
    // The timeout races the whole call (retries included) and aborts the request underneath it.
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(new Error(`Secrets Manager did not answer within ${this.timeout} ms`));
      }, this.timeout);
    });
    try {
      const result = await Promise.race([
        this.options.client.send(new GetSecretValueCommand({ SecretId: id }), { abortSignal: abort.signal }),
        timeout,
      ]);
      if (result.SecretString === undefined) throw new Error(`secret ${id} has no string value`);
      return result.SecretString;
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return MISSING;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}
