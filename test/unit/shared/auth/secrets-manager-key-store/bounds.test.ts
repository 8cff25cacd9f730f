/** The Secrets Manager key store: caching, per-call timeout, last-known-good fallback (SDK client mocked). */
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { SecretsManagerKeyStore } from '../../../../../shared/auth/secrets-manager-key-store';

const sm = mockClient(SecretsManagerClient);
let clock = 1_000_000;

function store(options: Partial<ConstructorParameters<typeof SecretsManagerKeyStore>[0]> = {}) {
  return new SecretsManagerKeyStore({
    client: new SecretsManagerClient({ region: 'eu-west-1' }),
    secretPrefix: 'das/prod',
    defaultSecretId: 'das/prod/default-signing-secret',
    cacheTtlMs: 60_000,
    maxStaleMs: 600_000,
    now: () => clock,
    ...options,
  });
}

beforeEach(() => {
  sm.reset();
  clock = 1_000_000;
});

describe('SecretsManagerKeyStore', () => {
  it('reads an application secret with one key, by its name under the prefix', async () => {
    sm.on(GetSecretValueCommand, { SecretId: 'das/prod/apps/app-a' }).resolves({
      SecretString: '{"accessKey":"ak-one"}',
    });
    expect(await store().applicationKeys('app-a')).toEqual({ accessKeys: ['ak-one'], signingSecret: undefined });
  });

  it('reads two active keys and an own secret during a rotation', async () => {
    sm.on(GetSecretValueCommand).resolves({
      SecretString: '{"accessKeys":["ak-new","ak-old"],"signingSecret":"sk-app"}',
    });
    expect(await store().applicationKeys('app-a')).toEqual({
      accessKeys: ['ak-new', 'ak-old'],
      signingSecret: 'sk-app',
    });
  });

  it('answers undefined for an application without a secret', async () => {
    sm.on(GetSecretValueCommand).rejects(new ResourceNotFoundException({ message: 'no', $metadata: {} }));
    expect(await store().applicationKeys('app-x')).toBeUndefined();
  });

  it('reads the default secret', async () => {
    sm.on(GetSecretValueCommand, { SecretId: 'das/prod/default-signing-secret' }).resolves({
      SecretString: '{"signingSecret":"deployment-default"}',
    });
    expect(await store().defaultSecret()).toBe('deployment-default');
  });

  it('serves from its cache within the TTL and fetches again after it', async () => {
    sm.on(GetSecretValueCommand).resolves({ SecretString: '{"accessKey":"ak-one"}' });
    const keys = store();
    await keys.applicationKeys('app-a');
    clock += 59_000;
    await keys.applicationKeys('app-a');
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(1);
    clock += 2_000;
    await keys.applicationKeys('app-a');
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });

  it('makes one call for many concurrent readers', async () => {
    sm.on(GetSecretValueCommand).resolves({ SecretString: '{"accessKey":"ak-one"}' });
    const keys = store();
    await Promise.all(Array.from({ length: 10 }, () => keys.applicationKeys('app-a')));
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  it('keeps serving the last good value while Secrets Manager fails, for a bounded time', async () => {
    sm.on(GetSecretValueCommand)
      .resolvesOnce({ SecretString: '{"accessKey":"ak-one"}' })
      .rejects(new Error('throttled'));
    const keys = store();
    await keys.applicationKeys('app-a');
    clock += 120_000;
    expect(await keys.applicationKeys('app-a')).toEqual({ accessKeys: ['ak-one'], signingSecret: undefined });
    clock += 600_000;
    await expect(keys.applicationKeys('app-a')).rejects.toThrow('secret das/prod/apps/app-a could not be read');
  });

  it('fails when Secrets Manager fails and no good value was ever read', async () => {
    sm.on(GetSecretValueCommand).rejects(new Error('network down'));
    await expect(store().defaultSecret()).rejects.toThrow('secret das/prod/default-signing-secret could not be read');
  });

  // A call that never answers must not hold the request: without the timeout this test would hang until
  // its own 2 s limit and fail.
  it('gives up on a call that does not answer within its timeout', async () => {
    sm.on(GetSecretValueCommand).callsFake(() => new Promise(() => undefined));
    const failure = store({ callTimeoutMs: 50 }).applicationKeys('app-a');
    await expect(failure).rejects.toThrow('secret das/prod/apps/app-a could not be read');
    await expect(failure.catch((e: Error) => (e.cause as Error).message)).resolves.toBe(
      'Secrets Manager did not answer within 50 ms',
    );
  }, 2_000);

  describe('during an outage of Secrets Manager', () => {
    const never = () => new Promise<never>(() => undefined);

    it('answers a warm request at once from the stale value, whatever the store does, and refreshes beside it', async () => {
      sm.on(GetSecretValueCommand).resolvesOnce({ SecretString: '{"accessKey":"ak-one"}' }).callsFake(never);
      const keys = store({ callTimeoutMs: 3_000 });
      await keys.applicationKeys('app-a');
      clock += 61_000;
      // The call underneath never answers: a request that waited for it would hang this test.
      await expect(keys.applicationKeys('app-a')).resolves.toEqual({
        accessKeys: ['ak-one'],
        signingSecret: undefined,
      });
      await expect(keys.applicationKeys('app-a')).resolves.toEqual({
        accessKeys: ['ak-one'],
        signingSecret: undefined,
      });
      expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(2);
    }, 1_000);

    it('backs off between refresh attempts: 1 s, then 2 s, doubling up to the limit', async () => {
      sm.on(GetSecretValueCommand)
        .resolvesOnce({ SecretString: '{"accessKey":"ak-one"}' })
        .rejects(new Error('throttled'));
      const keys = store({ maxBackoffMs: 4_000 });
      await keys.applicationKeys('app-a');
      clock += 61_000;
      const attemptsAfter = async (ms: number) => {
        clock += ms;
        await keys.applicationKeys('app-a');
        await new Promise((resolve) => setImmediate(resolve));
        return sm.commandCalls(GetSecretValueCommand).length;
      };
      expect(await attemptsAfter(0)).toBe(2); // first refresh attempt, fails: next one in 1 s
      expect(await attemptsAfter(999)).toBe(2);
      expect(await attemptsAfter(1)).toBe(3); // fails: next in 2 s
      expect(await attemptsAfter(1_999)).toBe(3);
      expect(await attemptsAfter(1)).toBe(4); // fails: next in 4 s (the limit)
      expect(await attemptsAfter(3_999)).toBe(4);
      expect(await attemptsAfter(1)).toBe(5); // fails: still 4 s
      expect(await attemptsAfter(3_999)).toBe(5);
      expect(await attemptsAfter(1)).toBe(6);
    });

    it('takes the new value once the store answers again, and forgets the back-off', async () => {
      sm.on(GetSecretValueCommand)
        .resolvesOnce({ SecretString: '{"accessKey":"ak-one"}' })
        .rejectsOnce(new Error('throttled'))
        .resolves({ SecretString: '{"accessKey":"ak-two"}' });
      const keys = store();
      await keys.applicationKeys('app-a');
      clock += 61_000;
      await keys.applicationKeys('app-a');
      await new Promise((resolve) => setImmediate(resolve));
      clock += 1_000;
      expect(await keys.applicationKeys('app-a')).toEqual({ accessKeys: ['ak-one'], signingSecret: undefined });
      await new Promise((resolve) => setImmediate(resolve));
      expect(await keys.applicationKeys('app-a')).toEqual({ accessKeys: ['ak-two'], signingSecret: undefined });
    });

    it('without a usable value, fails at once during the back-off instead of waiting for the store again', async () => {
      sm.on(GetSecretValueCommand).callsFake(never);
      const keys = store({ callTimeoutMs: 50 });
      await expect(keys.applicationKeys('app-a')).rejects.toThrow('secret das/prod/apps/app-a could not be read');
      const started = Date.now();
      await expect(keys.applicationKeys('app-a')).rejects.toThrow(
        'secret das/prod/apps/app-a could not be read; the next attempt is in 1000 ms',
      );
      expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(1);
      expect(Date.now() - started).toBeLessThan(50);
    }, 2_000);
  });

  it('refuses a secret without an access key', async () => {
    sm.on(GetSecretValueCommand).resolves({ SecretString: '{"signingSecret":"x"}' });
    await expect(store().applicationKeys('app-a')).rejects.toThrow('application secret has no accessKey');
  });
});
