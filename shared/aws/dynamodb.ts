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

/** A client of the operations' DynamoDB endpoint (AWS's, or the one the environment names), instrumented. */
function serviceClient(options: { cacheMiddleware?: boolean }): DynamoDBClient {
  const env = environment();
  const raw = env.dynamodbEndpoint
    ? new DynamoDBClient({
        ...endpointClientConfig(env.dynamodbEndpoint, env.dynamodbRegion ?? 'local', env.awsCredentialsConfigured),
        maxAttempts: 3,
        ...options,
      })
    : new DynamoDBClient({ maxAttempts: 3, ...options });
  // The SDK's logger step filters every call's input and output for its logger before calling it, and the
  // functions configure none (the default discards everything): work on every call for nothing.
  raw.middlewareStack.remove('loggerMiddleware');
  // Instrumented before the document client wraps it: the document client sends through this client's stack.
  return traced(raw);
}

/**
 * The low-level client of the hot path that writes its few values out itself (the quota store: two writes per
 * request). It resolves each command's middleware once per container instead of once per call
 * (`cacheMiddleware`), which the document client cannot do: hence a client of its own.
 */
export function dynamoClient(): DynamoDBClient {
  rawClient ??= serviceClient({ cacheMiddleware: true });
  return rawClient;
}

export function dynamoDocumentClient(): DynamoDBDocumentClient {
  client ??= createDocumentClient(serviceClient({}));
  return client;
}

let indexJobClient: DynamoDBDocumentClient | undefined;

/**
 * The document client of the index jobs' function: the endpoint its own environment names (AWS's when none), and
 * more retries than a request's, since a job's step can afford to wait.
 */
export function indexJobDocumentClient(env: {
  dynamodbEndpoint?: string;
  dynamodbRegion?: string;
  awsCredentialsConfigured: boolean;
  tracing: boolean;
}): DynamoDBDocumentClient {
  indexJobClient ??= createDocumentClient(
    traced(
      new DynamoDBClient({
        ...(env.dynamodbEndpoint
          ? endpointClientConfig(env.dynamodbEndpoint, env.dynamodbRegion ?? 'local', env.awsCredentialsConfigured)
          : {}),
        maxAttempts: 5,
      }),
      env.tracing,
    ),
  );
  return indexJobClient;
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
