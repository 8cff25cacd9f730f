/**
 * A deployment's webhook signing secrets (changes/webhook-secrets.ts), with Secrets Manager mocked at the SDK client:
 * the secret's name, the `whsec_` form the signer takes, five minutes of cache, the last good value for an hour
 * while the store is out of reach, and a clear error for a secret that holds no signing secret.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { SecretsManagerWebhookSecrets } from '../../../../shared/changes/webhook-secrets';

const sm = mockClient(SecretsManagerClient);
const VALUE = 'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZn';
let clock = 1_000_000;

function secrets() {
  return new SecretsManagerWebhookSecrets({
    client: new SecretsManagerClient({ region: 'eu-west-1' }),
    secretPrefix: 'data-access-service/prod',
    now: () => clock,
  });
}

beforeEach(() => {
  sm.reset();
  clock = 1_000_000;
});

it('reads <prefix>/webhooks/<id> and answers whsec_ followed by its value, cached for five minutes', async () => {
  sm.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ secret: VALUE }) });
  const store = secrets();
  expect(await store.secretOf('crm')).toBe(`whsec_${VALUE}`);
  clock += 5 * 60_000 - 1;
  expect(await store.secretOf('crm')).toBe(`whsec_${VALUE}`);
  expect(sm.commandCalls(GetSecretValueCommand).map((c) => c.args[0].input)).toEqual([
    { SecretId: 'data-access-service/prod/webhooks/crm' },
  ]);
  clock += 1;
  await store.secretOf('crm');
  expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(2);
});

it('keeps signing with the last good value for an hour while the store is out of reach, then fails', async () => {
  sm.on(GetSecretValueCommand).resolvesOnce({ SecretString: JSON.stringify({ secret: VALUE }) });
  const store = secrets();
  await store.secretOf('crm');
  sm.on(GetSecretValueCommand).rejects(new Error('connect ETIMEDOUT'));
  clock += 59 * 60_000;
  expect(await store.secretOf('crm')).toBe(`whsec_${VALUE}`);
  clock += 60_000;
  await expect(store.secretOf('crm')).rejects.toThrow('connect ETIMEDOUT');
});

it('refuses a secret that holds no signing secret, naming the subscription', async () => {
  sm.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ key: 'x' }) });
  await expect(secrets().secretOf('crm')).rejects.toThrow("the secret of webhook 'crm' holds no signing secret");
  sm.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ secret: 'too-short' }) });
  await expect(secrets().secretOf('erp')).rejects.toThrow("the secret of webhook 'erp' holds no signing secret");
});
