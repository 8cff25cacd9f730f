/**
 * The mirror of a deployed stage, for `das sql status --stage <stage>`: its Aurora cluster through the RDS Data API,
 * as the SELECT-only query user, with the caller's AWS credentials and region. The cluster and the query secret are
 * found by the names the stage deployed them under (shared/mirror/deployed-names.ts), as the webhooks and config
 * commands find a stage's tables: the secret's ARN (DescribeSecret, so the password never reaches this process; the
 * Data API reads it with the caller's permission) gives the partition, region and account of the cluster's ARN.
 * Without a query secret, a stage whose default signing secret is there runs custom SQL on the embedded engine; one
 * without either is not deployed in this account and region.
 */
import { DatabaseResumingException, RDSDataClient } from '@aws-sdk/client-rds-data';
import { DescribeSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CommandFailure } from '../../packages/client/src/cli/cli-io';
import { dataApiSession } from '../../shared/mirror/data-api-session';
import {
  defaultSecretNameFor,
  SQL_DATABASE,
  sqlClusterIdentifierFor,
  sqlSecretNameFor,
} from '../../shared/mirror/deployed-names';
import type { SqlSession } from '../../shared/mirror/mirror-tables';

/** How long a cluster paused at 0 ACUs may take to resume before status gives up (it resumes within ~15 s). */
const RESUME_WITHIN_MS = 60_000;
const RESUME_POLL_MS = 1_000;

export interface StageMirror {
  session: SqlSession;
  /** The mirror as the output names it. */
  where: string;
  close(): void;
}

/** The stage's mirror, or a one-line CommandFailure saying why there is none to read. */
export async function stageMirror(stage: string, onResuming: () => void): Promise<StageMirror> {
  const secrets = new SecretsManagerClient({ maxAttempts: 3 });
  const cluster = sqlClusterIdentifierFor(stage);
  let secretArn: string;
  try {
    // An empty AWS_REGION is no region either, though the SDK would take it for one.
    if (!(await secrets.config.region().catch(() => ''))) throw new CommandFailure(noRegion(stage));
    secretArn = await secretArnOf(secrets, stage);
  } catch (error) {
    throw error instanceof CommandFailure ? error : awsFailure(stage, error);
  } finally {
    secrets.destroy();
  }
  const [, partition, , region, account] = secretArn.split(':');
  const client = new RDSDataClient({ maxAttempts: 3 });
  const data = dataApiSession({
    client,
    resourceArn: `arn:${partition}:rds:${region}:${account}:cluster:${cluster}`,
    secretArn,
    database: SQL_DATABASE,
  });
  const where = `stage '${stage}' (cluster ${cluster}, database ${SQL_DATABASE})`;
  let told = false;
  return {
    where,
    close: () => client.destroy(),
    session: {
      async execute(sql, values) {
        const deadline = Date.now() + RESUME_WITHIN_MS;
        for (;;) {
          try {
            return await data.execute(sql, values);
          } catch (error) {
            if (!(error instanceof DatabaseResumingException) || Date.now() >= deadline) {
              throw awsFailure(stage, error, where);
            }
            if (!told) onResuming();
            told = true;
            await new Promise((resolve) => setTimeout(resolve, RESUME_POLL_MS));
          }
        }
      },
    },
  };
}

/** The query secret's ARN; when there is none, why: a stage on the embedded engine, or no such stage. */
async function secretArnOf(secrets: SecretsManagerClient, stage: string): Promise<string> {
  const query = await describe(secrets, sqlSecretNameFor(stage, 'query'));
  if (query) return query;
  if (await describe(secrets, defaultSecretNameFor(stage))) {
    throw new CommandFailure(
      `das sql status: stage '${stage}' runs custom SQL on the embedded engine (deployed with -c sqlEngine=embedded): ` +
        'it has no MySQL mirror',
    );
  }
  throw new CommandFailure(
    `das sql status: no stage '${stage}' is deployed in ${await secrets.config.region()} with these credentials ` +
      `(no secret ${defaultSecretNameFor(stage)}); check --stage, AWS_REGION and AWS_PROFILE`,
  );
}

/** A secret's ARN, or undefined when no secret has that name. */
async function describe(secrets: SecretsManagerClient, name: string): Promise<string | undefined> {
  try {
    return (await secrets.send(new DescribeSecretCommand({ SecretId: name }))).ARN;
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
}

function noRegion(stage: string): string {
  return `das sql status: no AWS region: set AWS_REGION (or the profile's region) to the one stage '${stage}' is deployed in`;
}

/** An AWS call's failure in one line: missing credentials said as such, anything else by its name. */
function awsFailure(stage: string, error: unknown, where = `stage '${stage}'`): CommandFailure {
  const { name, message } = error as Error;
  if (name === 'CredentialsProviderError') {
    return new CommandFailure(
      `das sql status: no AWS credentials to reach stage '${stage}': set AWS_PROFILE, or AWS_ACCESS_KEY_ID and ` +
        'AWS_SECRET_ACCESS_KEY (the AWS SDK looks where the AWS CLI does)',
    );
  }
  return new CommandFailure(`das sql status: ${where}: ${name}: ${message.split('\n')[0]}`);
}
