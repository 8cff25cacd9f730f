/**
 * X-Ray subsegments for every AWS call a function makes (DynamoDB, Secrets Manager), so a trace shows which call
 * took the time, not only the Lambda segment. The X-Ray SDK's AWS SDK v3 middleware does the work. It is loaded
 * and added only where a trace exists to hold it (in Lambda with active tracing): loading it installs async hooks
 * for the whole process, which local runs and tests do not need, and which would send nothing there.
 */
import type * as XRay from 'aws-xray-sdk-core';
import { environment } from '../runtime/environment';

/** The middleware name the X-Ray SDK gives its instrumentation (visible in a client's middleware stack). */
export const XRAY_MIDDLEWARE_NAME = 'XRaySDKInstrumentation';

type Client = Parameters<typeof XRay.captureAWSv3Client>[0];

/** The client, instrumented when tracing is on (`tracing` forces it either way, for tests). */
export function traced<T extends Client>(client: T, tracing: boolean = environment().tracing): T {
  if (!tracing) return client;
  // A static require, so esbuild bundles it; evaluated only when tracing is on.
  const xray = require('aws-xray-sdk-core') as typeof XRay;
  // A call outside an invocation (none today) must never fail because it has no trace to join.
  xray.setContextMissingStrategy('IGNORE_ERROR');
  return xray.captureAWSv3Client(client);
}
