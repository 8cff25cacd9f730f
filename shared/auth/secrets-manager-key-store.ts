/**
 * Key store adapter over AWS Secrets Manager: one secret per application (`<prefix>/apps/<appCode>`) and one
 * for the deployment's default secret. Values are cached in the container; each call has a timeout; when
 * Secrets Manager fails, the last good value keeps serving for a bounded time, so a brief outage of the
 * secret store does not become an outage of the API.
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
  now?: () => number;
}

interface CacheEntry<T> {
  value: T;
  fetchedAt: number;
}

/** An application whose secret does not exist: remembered briefly so that unknown keys do not hammer the store. */
const MISSING = Symbol('missing');

export class SecretsManagerKeyStore implements KeyStore {
  private readonly cache = new Map<string, CacheEntry<string | typeof MISSING>>();
  private readonly inflight = new Map<string, Promise<string | typeof MISSING>>();
  private readonly ttl: number;
  private readonly maxStale: number;
  private readonly timeout: number;
  private readonly now: () => number;

  constructor(private readonly options: SecretsManagerKeyStoreOptions) {
    this.ttl = options.cacheTtlMs ?? 5 * 60_000;
    this.maxStale = options.maxStaleMs ?? 60 * 60_000;
    this.timeout = options.callTimeoutMs ?? 2_000;
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
    try {
      const value = await this.fetchOnce(id);
      this.cache.set(id, { value, fetchedAt: this.now() });
      return value;
    } catch (error) {
      if (cached && age < this.maxStale) return cached.value;
      throw new Error(`secret ${id} could not be read`, { cause: error });
    }
  }

  /** One request per secret at a time, however many callers wait for it. */
  private fetchOnce(id: string): Promise<string | typeof MISSING> {
    let pending = this.inflight.get(id);
    if (!pending) {
      pending = this.fetch(id).finally(() => this.inflight.delete(id));
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
