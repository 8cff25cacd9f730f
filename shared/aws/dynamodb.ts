/** The DynamoDB client of this container, created once and reused by every request. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { environment } from '../runtime/environment';

/** A document client with the translation rules the record store relies on. */
export function createDocumentClient(raw: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(raw, {
    // Record numbers are doubles validated to DynamoDB's range; large ones are imprecise by nature, not by
    // translation, so they go through as the double they are, both ways.
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false, allowImpreciseNumbers: true },
    unmarshallOptions: { wrapNumbers: (text: string) => Number(text) },
  });
}

let client: DynamoDBDocumentClient | undefined;

export function dynamoDocumentClient(): DynamoDBDocumentClient {
  if (!client) {
    const endpoint = environment().dynamodbEndpoint;
    const raw = endpoint
      ? new DynamoDBClient({
          endpoint,
          region: 'local',
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          maxAttempts: 3,
        })
      : new DynamoDBClient({ maxAttempts: 3 });
    client = createDocumentClient(raw);
  }
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
