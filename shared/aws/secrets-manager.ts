/** The Secrets Manager client of this container, created once and reused. */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { traced } from './tracing';

let client: SecretsManagerClient | undefined;

export function secretsManagerClient(): SecretsManagerClient {
  client ??= traced(new SecretsManagerClient({ maxAttempts: 2 }));
  return client;
}

let deploymentClient: SecretsManagerClient | undefined;

/** For deploy-time functions: reads none of the operations' environment, and retries more (a deploy can wait). */
export function deploymentSecretsManagerClient(): SecretsManagerClient {
  deploymentClient ??= new SecretsManagerClient({ maxAttempts: 5 });
  return deploymentClient;
}
