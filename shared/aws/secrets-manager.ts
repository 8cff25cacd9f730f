/** The Secrets Manager client of this container, created once and reused. */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { traced } from './tracing';

let client: SecretsManagerClient | undefined;

export function secretsManagerClient(): SecretsManagerClient {
  client ??= traced(new SecretsManagerClient({ maxAttempts: 2 }));
  return client;
}
