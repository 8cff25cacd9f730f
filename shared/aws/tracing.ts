/**
 * X-Ray subsegments for every AWS call a function makes (DynamoDB, Secrets Manager), so a trace shows which call
 * took the time, not only the Lambda segment. The X-Ray SDK's AWS SDK v3 middleware does the work. It is loaded
 * and added only where a trace exists to hold it (in Lambda with active tracing): loading it installs async hooks
 * for the whole process, which local runs and tests do not need, and which would send nothing there.
 *
 * Only the parts of the SDK that instrumentation needs are loaded (and bundled): the v3 client middleware, the
 * trace context, and the Lambda set-up the SDK's main entry performs when it loads. The main entry also carries
 * the SDK v2 patcher (with semver), the HTTP and promise patchers, the EC2/ECS/Beanstalk plugins and the
 * Express-style middleware: about 40 KB of every function's bundle that no function uses.
 */
import type * as XRay from 'aws-xray-sdk-core';
import { environment, xrayProcessFacts } from '../runtime/environment';

/** The middleware name the X-Ray SDK gives its instrumentation (visible in a client's middleware stack). */
export const XRAY_MIDDLEWARE_NAME = 'XRaySDKInstrumentation';

type Client = Parameters<typeof XRay.captureAWSv3Client>[0];

interface Instrumentation {
  captureAWSv3Client: typeof XRay.captureAWSv3Client;
  setContextMissingStrategy: typeof XRay.setContextMissingStrategy;
}

let instrumentation: Instrumentation | undefined;

/** The SDK's parts, set up as its main entry sets them up (aws-xray-sdk-core/dist/lib/aws-xray.js), once. */
function loadInstrumentation(): Instrumentation {
  if (instrumentation) return instrumentation;
  // Static requires, so esbuild bundles them; evaluated only when tracing is on.
  const { captureAWSClient } = require('aws-xray-sdk-core/dist/lib/patchers/aws3_p') as {
    captureAWSClient: typeof XRay.captureAWSv3Client;
  };
  const contextUtils = require('aws-xray-sdk-core/dist/lib/context_utils') as {
    setContextMissingStrategy: typeof XRay.setContextMissingStrategy;
  };
  const segmentUtils = require('aws-xray-sdk-core/dist/lib/segments/segment_utils') as {
    setSDKData(data: object): void;
    setServiceData(data: object): void;
  };
  const lambdaEnvironment = require('aws-xray-sdk-core/dist/lib/env/aws_lambda') as { init(): void };
  const sdkPackage = require('aws-xray-sdk-core/package.json') as { name: string; version: string };
  const facts = xrayProcessFacts();
  segmentUtils.setSDKData({ sdk: 'X-Ray for Node.js', sdk_version: sdkPackage.version, package: sdkPackage.name });
  segmentUtils.setServiceData({
    runtime: process.release?.name || 'unknown',
    runtime_version: process.version,
    version: facts.npmPackageVersion ?? 'unknown',
    name: facts.npmPackageName ?? 'unknown',
  });
  // In Lambda: the facade segment each invocation's trace id is read into, which subsegments attach to.
  if (facts.lambda) lambdaEnvironment.init();
  instrumentation = {
    captureAWSv3Client: captureAWSClient,
    setContextMissingStrategy: contextUtils.setContextMissingStrategy,
  };
  return instrumentation;
}

/** The client, instrumented when tracing is on (`tracing` forces it either way, for tests). */
export function traced<T extends Client>(client: T, tracing: boolean = environment().tracing): T {
  if (!tracing) return client;
  const xray = loadInstrumentation();
  // A call outside an invocation (none today) must never fail because it has no trace to join.
  xray.setContextMissingStrategy('IGNORE_ERROR');
  return xray.captureAWSv3Client(client);
}
