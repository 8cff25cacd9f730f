/** The DynamoDB client of this container, created once and reused by every request. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { environment } from '../runtime/environment';

/** A document client with the translation rules the record store relies on. */
export function createDocumentClient(raw: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(raw, {
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
    unmarshallOptions: { wrapNumbers: false },
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
