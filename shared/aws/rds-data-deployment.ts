/**
 * The RDS Data API client of deploy-time functions (the query user's custom resource): it reads none of the
 * operations' environment, and retries throttles and network failures more, since a deploy can afford to wait.
 */
import { RDSDataClient } from '@aws-sdk/client-rds-data';

let client: RDSDataClient | undefined;

export function deploymentRdsDataClient(): RDSDataClient {
  client ??= new RDSDataClient({ maxAttempts: 5 });
  return client;
}
