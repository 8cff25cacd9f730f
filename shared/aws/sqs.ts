/** The SQS client of this container (the change log's and the webhook deliveries' queues), created once and reused. */
import { SQSClient } from '@aws-sdk/client-sqs';
import { traced } from './tracing';

let client: SQSClient | undefined;

export function sqsClient(): SQSClient {
  client ??= traced(new SQSClient({ maxAttempts: 3 }));
  return client;
}
