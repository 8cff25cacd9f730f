/** The Step Functions client of this container (index jobs: whether another run is still going), created once. */
import { SFNClient } from '@aws-sdk/client-sfn';
import { traced } from './tracing';

let client: SFNClient | undefined;

/** `tracing`: whether this container records X-Ray subsegments (an index job's function does). */
export function stepFunctionsClient(tracing: boolean): SFNClient {
  client ??= traced(new SFNClient({ maxAttempts: 3 }), tracing);
  return client;
}
