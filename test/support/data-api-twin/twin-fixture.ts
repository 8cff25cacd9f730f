/**
 * A MariaDB server with a mirror database, its writer and SELECT-only query users, and the Data API twin in front
 * of it, with an SDK client pointed at the twin (fake credentials).
 */
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import { MariaDb } from '../mysql-compat/mariadb';
import { DataApiTwin } from './data-api-twin';

export const RESOURCE_ARN = 'arn:aws:rds:eu-west-1:123456789012:cluster:das-mirror';
export const WRITER_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:das-mirror-writer';
export const QUERY_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:das-mirror-query';

export interface TwinFixture {
  mariadb: MariaDb;
  twin: DataApiTwin;
  client: RDSDataClient;
  database: string;
  stop(): Promise<void>;
}

export async function startTwinFixture(database = 'das_mirror'): Promise<TwinFixture> {
  const mariadb = await MariaDb.start('UTC');
  const db = mariadb.connection;
  await db.query(`CREATE DATABASE ${database} CHARACTER SET utf8mb4`);
  await db.query("CREATE USER 'das_writer'@'localhost' IDENTIFIED BY 'writer-pw'");
  await db.query(`GRANT ALL ON ${database}.* TO 'das_writer'@'localhost'`);
  // The query user may read the mirror and keep a temporary table of its own session (a result read in pages).
  await db.query("CREATE USER 'das_query'@'localhost' IDENTIFIED BY 'query-pw'");
  await db.query(`GRANT SELECT, CREATE TEMPORARY TABLES ON ${database}.* TO 'das_query'@'localhost'`);
  const twin = await DataApiTwin.start({
    socket: mariadb.socket,
    admin: { user: 'root', password: '' },
    resourceArn: RESOURCE_ARN,
    secrets: {
      [WRITER_SECRET_ARN]: { user: 'das_writer', password: 'writer-pw' },
      [QUERY_SECRET_ARN]: { user: 'das_query', password: 'query-pw' },
    },
  });
  const client = new RDSDataClient({
    endpoint: twin.endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDTWIN', secretAccessKey: 'twin-secret' },
    maxAttempts: 1,
  });
  return {
    mariadb,
    twin,
    client,
    database,
    async stop() {
      client.destroy();
      await twin.stop();
      await mariadb.stop();
    },
  };
}
