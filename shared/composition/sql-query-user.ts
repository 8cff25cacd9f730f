/**
 * The deploy's custom resource that makes custom SQL's query user on the Aurora cluster (mirror/query-user.ts,
 * lib/sql-query-user.ts): it reads the query user's secret and runs the statements as the writer, through the
 * Data API. The cluster and both secrets arrive as resource properties. Deleting the resource leaves the user: it
 * goes with the cluster.
 */
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import type { CdkCustomResourceEvent, CdkCustomResourceResponse } from 'aws-lambda';
import { deploymentRdsDataClient } from '../aws/rds-data-deployment';
import { deploymentSecretsManagerClient } from '../aws/secrets-manager';
import { dataApiSession } from '../mirror/data-api-session';
import { ensureQueryUser } from '../mirror/query-user';

export interface QueryUserProperties {
  ServiceToken: string;
  ClusterArn: string;
  Database: string;
  WriterSecretArn: string;
  QuerySecretArn: string;
}

/** A paused cluster resumes in well under this; a custom resource may take up to its function's timeout. */
const RESUME_WITHIN_MS = 5 * 60_000;

export async function handleQueryUser(
  event: CdkCustomResourceEvent<QueryUserProperties>,
): Promise<CdkCustomResourceResponse> {
  const physicalResourceId = `${event.ResourceProperties.ClusterArn}/query-user`;
  if (event.RequestType === 'Delete') return { PhysicalResourceId: physicalResourceId };
  const { ClusterArn, Database, WriterSecretArn, QuerySecretArn } = event.ResourceProperties;
  const secret = await deploymentSecretsManagerClient().send(new GetSecretValueCommand({ SecretId: QuerySecretArn }));
  const { username, password } = JSON.parse(secret.SecretString ?? '{}') as { username?: unknown; password?: unknown };
  if (typeof username !== 'string' || typeof password !== 'string') {
    throw new Error(`the query user's secret ${QuerySecretArn} holds no username and password`);
  }
  await ensureQueryUser({
    writer: dataApiSession({
      client: deploymentRdsDataClient(),
      resourceArn: ClusterArn,
      secretArn: WriterSecretArn,
      database: Database,
    }),
    user: username,
    password,
    database: Database,
    resumeWithinMs: RESUME_WITHIN_MS,
  });
  return { PhysicalResourceId: physicalResourceId, Data: { User: username } };
}
