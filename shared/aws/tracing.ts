/**
 * X-Ray subsegments for every AWS call a function makes (DynamoDB, Secrets Manager), so a trace shows which call
 * took the time, not only the Lambda segment. The X-Ray SDK's AWS SDK v3 middleware does the work; it is added
 * only where a trace exists to hold it (in Lambda with active tracing), so local runs and tests send nothing and
 * log no "missing context" noise.
 */
import { captureAWSv3Client, setContextMissingStrategy } from 'aws-xray-sdk-core';
import { environment } from '../runtime/environment';

/** The middleware name the X-Ray SDK gives its instrumentation (visible in a client's middleware stack). */
export const XRAY_MIDDLEWARE_NAME = 'XRaySDKInstrumentation';

type Client = Parameters<typeof captureAWSv3Client>[0];

/** The client, instrumented when tracing is on (`tracing` forces it either way, for tests). */
export function traced<T extends Client>(client: T, tracing: boolean = environment().tracing): T {
  if (!tracing) return client;
  // A call outside an invocation (none today) must never fail because it has no trace to join.
  setContextMissingStrategy('IGNORE_ERROR');
  return captureAWSv3Client(client);
}
