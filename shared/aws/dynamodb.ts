/** The DynamoDB client of this container, created once and reused by every request. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { environment } from '../runtime/environment';
import { traced } from './tracing';

/** A document client with the translation rules the record store relies on. */
export function createDocumentClient(raw: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(raw, {
    // Record numbers are doubles validated to DynamoDB's range; large ones are imprecise by nature, not by
    // translation, so they go through as the double they are, both ways.
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false, allowImpreciseNumbers: true },
    unmarshallOptions: { wrapNumbers: (text: string) => Number(text) },
  });
}

/**
 * How to reach a DynamoDB endpoint other than AWS's own (local runs: the embedded store, an emulator such as
 * moto or DynamoDB Local, or any endpoint given to `npm start -- --dynamodb-endpoint`): the region to sign for,
 * and placeholder credentials unless real ones are configured.
 */
export function endpointClientConfig(
  endpoint: string,
  region: string,
  credentialsConfigured: boolean,
): { endpoint: string; region: string; credentials?: { accessKeyId: string; secretAccessKey: string } } {
  return {
    endpoint,
    region,
    ...(credentialsConfigured ? {} : { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  };
}

let rawClient: DynamoDBClient | undefined;
let client: DynamoDBDocumentClient | undefined;

/**
 * The low-level client, for the hot path that writes its few values out itself (the quota store). The document
 * client below wraps this same client: one connection pool, one middleware stack, one X-Ray instrumentation.
 */
export function dynamoClient(): DynamoDBClient {
  if (!rawClient) {
    const env = environment();
    const raw = env.dynamodbEndpoint
      ? new DynamoDBClient({
          ...endpointClientConfig(env.dynamodbEndpoint, env.dynamodbRegion ?? 'local', env.awsCredentialsConfigured),
          maxAttempts: 3,
        })
      : new DynamoDBClient({ maxAttempts: 3 });
    // Instrumented before the document client wraps it: the document client sends through this client's stack.
    rawClient = traced(raw);
  }
  return rawClient;
}

export function dynamoDocumentClient(): DynamoDBDocumentClient {
  client ??= createDocumentClient(dynamoClient());
  return client;
}

let deploymentClient: DynamoDBDocumentClient | undefined;

/**
 * A document client for deploy-time functions: it reads none of the operations' environment (tables and secrets
 * arrive as resource properties), and retries more, since a deploy can afford to wait.
 */
export function deploymentDocumentClient(): DynamoDBDocumentClient {
  deploymentClient ??= createDocumentClient(new DynamoDBClient({ maxAttempts: 5 }));
  return deploymentClient;
}
