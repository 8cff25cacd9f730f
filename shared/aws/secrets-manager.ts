/** The Secrets Manager client of this container, created once and reused. */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

let client: SecretsManagerClient | undefined;

export function secretsManagerClient(): SecretsManagerClient {
  client ??= new SecretsManagerClient({ maxAttempts: 2 });
  return client;
}
