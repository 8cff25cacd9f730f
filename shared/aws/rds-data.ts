/**
 * The RDS Data API client of this container (custom SQL on Aurora MySQL, docs/interface.md §20), created once and
 * reused. Only the functions that run SQL import this file, so no other bundle carries the client.
 */
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import { traced } from './tracing';

let client: RDSDataClient | undefined;

export function rdsDataClient(): RDSDataClient {
  // Retries are the caller's: a query retries a resuming database only within its own time limit.
  client ??= traced(new RDSDataClient({ maxAttempts: 1 }));
  return client;
}
