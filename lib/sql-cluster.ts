/**
 * Custom SQL's MySQL engine in a deployment (docs/interface.md §20, docs/deploying.md "Custom SQL on Aurora"): an
 * Aurora MySQL Serverless v2 cluster holding the mirror, reached only through the RDS Data API, so no function runs
 * in its network.
 *
 * - Its own VPC with isolated subnets only: no NAT gateway, no internet gateway, no route out. Nothing connects
 *   over the MySQL protocol; the Data API reaches the cluster from AWS's side. Its security group admits nothing.
 * - Storage encrypted (the stage's customer-managed key, or the RDS managed key); deletion protection and a final
 *   snapshot in production. The mirror is derived data (the change log and a backfill rebuild it), so other stages
 *   delete it with the stack.
 * - Two users, each with a secret of its own, generated in Secrets Manager: the writer (the cluster's admin user,
 *   which the mirror function alone reads) and the query user, which may only SELECT from the mirror's database
 *   (created by the writer with the query secret's password: lib/sql-query-user.ts).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { IpAddresses, SecurityGroup, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import {
  AuroraMysqlEngineVersion,
  ClusterInstance,
  Credentials,
  DatabaseCluster,
  DatabaseClusterEngine,
  DatabaseSecret,
} from 'aws-cdk-lib/aws-rds';
import { Construct } from 'constructs';
import { SQL_DATABASE, sqlClusterIdentifierFor } from '../shared/mirror/deployed-names';
import { acknowledge } from './nag-acknowledgements';

/** Aurora MySQL 3.08 is the first with auto-pause (0 ACUs); 3.10 is a long-term support release. */
export const SQL_ENGINE_VERSION = AuroraMysqlEngineVersion.VER_3_10_0;
/** The database users: the mirror's writer (the cluster's admin) and the SELECT-only query user. */
export const SQL_WRITER_USER = 'das_writer';
export const SQL_QUERY_USER = 'das_query';
/** How long a paused-capable cluster (0 ACUs) waits without connections before it pauses. */
export const SQL_AUTO_PAUSE = Duration.minutes(10);

export interface SqlClusterProps {
  stage: string;
  secretPrefix: string;
  production: boolean;
  /** ACUs: 0 lets the cluster pause when idle. */
  minCapacity: number;
  maxCapacity: number;
  encryptionKey?: IKey;
}

/** The cluster as the functions know it (environment and IAM). */
export interface SqlClusterResource {
  clusterArn: string;
  database: string;
  writerSecretArn: string;
  querySecretArn: string;
}

export class SqlCluster extends Construct {
  readonly vpc: Vpc;
  readonly cluster: DatabaseCluster;
  readonly querySecret: DatabaseSecret;
  readonly resource: SqlClusterResource;

  constructor(scope: Construct, id: string, props: SqlClusterProps) {
    super(scope, id);
    const secretKey = props.encryptionKey ? { encryptionKey: props.encryptionKey } : {};
    const removal = props.production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    this.vpc = new Vpc(this, 'Network', {
      ipAddresses: IpAddresses.cidr('10.64.0.0/24'),
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'sql', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 26 }],
      restrictDefaultSecurityGroup: false,
    });

    // No rule in, none out: the Data API needs neither.
    const securityGroup = new SecurityGroup(this, 'ClusterSecurityGroup', {
      vpc: this.vpc,
      description: `${props.stage} custom SQL cluster: reached through the Data API only, no connection in or out`,
      allowAllOutbound: false,
    });
    const writerSecret = new DatabaseSecret(this, 'WriterSecret', {
      username: SQL_WRITER_USER,
      secretName: `${props.secretPrefix}/sql/writer`,
      ...secretKey,
    });
    writerSecret.applyRemovalPolicy(removal);
    this.cluster = new DatabaseCluster(this, 'Cluster', {
      // `das sql status --stage` finds the cluster and its query secret by these names (shared/mirror/deployed-names.ts).
      clusterIdentifier: sqlClusterIdentifierFor(props.stage),
      engine: DatabaseClusterEngine.auroraMysql({ version: SQL_ENGINE_VERSION }),
      credentials: Credentials.fromSecret(writerSecret),
      defaultDatabaseName: SQL_DATABASE,
      writer: ClusterInstance.serverlessV2('Writer', { autoMinorVersionUpgrade: true }),
      serverlessV2MinCapacity: props.minCapacity,
      serverlessV2MaxCapacity: props.maxCapacity,
      ...(props.minCapacity === 0 ? { serverlessV2AutoPauseDuration: SQL_AUTO_PAUSE } : {}),
      enableDataApi: true,
      vpc: this.vpc,
      vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
      securityGroups: [securityGroup],
      storageEncrypted: true,
      ...(props.encryptionKey ? { storageEncryptionKey: props.encryptionKey } : {}),
      deletionProtection: props.production,
      removalPolicy: props.production ? RemovalPolicy.SNAPSHOT : RemovalPolicy.DESTROY,
      backup: { retention: Duration.days(props.production ? 14 : 1) },
      cloudwatchLogsExports: ['error', 'slowquery'],
      copyTagsToSnapshot: true,
    });

    this.querySecret = new DatabaseSecret(this, 'QuerySecret', {
      username: SQL_QUERY_USER,
      secretName: `${props.secretPrefix}/sql/query`,
      ...secretKey,
    });
    this.querySecret.applyRemovalPolicy(removal);
    // The Data API reads the host, port and engine from the secret too.
    const attachedQuery = this.querySecret.attach(this.cluster);

    this.resource = {
      clusterArn: this.cluster.clusterArn,
      database: SQL_DATABASE,
      writerSecretArn: writerSecret.secretArn,
      querySecretArn: attachedQuery.secretArn,
    };
    // The writer secret is the cluster's attached credentials: its ARN is the attachment's.
    if (this.cluster.secret) this.resource.writerSecretArn = this.cluster.secret.secretArn;

    if (!props.production) {
      acknowledge(this.cluster, [
        {
          id: 'AwsSolutions-RDS10',
          reason:
            'Outside production the mirror is derived data (the change log and a backfill rebuild it) and goes with ' +
            'its stack; production clusters have deletion protection.',
        },
      ]);
    }
    acknowledge(this, [
      {
        id: 'AwsSolutions-VPC7',
        reason:
          'The VPC has isolated subnets only and no route out; nothing connects into it (the Data API reaches the ' +
          'cluster from AWS), so flow logs would record no traffic of the service.',
      },
      {
        id: 'AwsSolutions-RDS6',
        reason:
          'IAM database authentication applies to MySQL-protocol connections; the service connects only through the ' +
          'Data API, which authenticates with IAM on the API and a Secrets Manager secret per database user.',
      },
      {
        id: 'AwsSolutions-RDS11',
        reason:
          'No client connects over the MySQL port (the security group admits nothing): a different port hides nothing.',
      },
      {
        id: 'AwsSolutions-RDS14',
        reason:
          'Backtrack is not available on Aurora Serverless v2 clusters; the mirror is rebuilt from the change log and ' +
          'the records, and production keeps automated backups.',
      },
      {
        id: 'AwsSolutions-RDS16',
        reason:
          'Error and slow-query logs are exported; the general and audit logs would record every mirror upsert ' +
          '(record contents), which the service never logs.',
      },
      {
        id: 'AwsSolutions-SMG4',
        reason:
          'Rotating the writer or query password needs the query user altered in step (lib/sql-query-user.ts runs ' +
          'on deploy); a rotation Lambda would need a route into the isolated VPC, which the design avoids.',
      },
    ]);
  }
}
