/**
 * Custom SQL on Aurora in a deployment (lib/sql-cluster.ts, lib/sql-mirror.ts; docs/interface.md §20): the
 * cluster in isolated subnets of its own VPC with no way out, encrypted, deletion-protected in production, Data
 * API on; a writer and a query secret; the query functions' environment and IAM scoped to the cluster and the
 * query secret; the mirror function on a schedule with the writer secret only, its dead-letter queue, its alarms
 * and its dashboard row. A stage on the embedded engine has none of it.
 */
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { HOOK_OPERATIONS } from '../../../shared/catalog/schema';
import {
  defaultSecretNameFor,
  SQL_DATABASE,
  sqlClusterIdentifierFor,
  sqlSecretNameFor,
} from '../../../shared/mirror/deployed-names';
import { type BuiltService, buildService, logicalIdOf, TEST_CONFIG } from '../../support/service-fixture';

let production: BuiltService;
let stateful: Template;
let stateless: Template;
let paused: BuiltService;
let embedded: BuiltService;

beforeAll(() => {
  production = buildService({ context: { stage: 'live', production: 'true', alarmEmail: 'oncall@example.com' } });
  stateful = production.statefulTemplate;
  stateless = production.statelessTemplate;
  paused = buildService({ context: { sqlEngine: 'aurora', sqlMinCapacity: '0', sqlMaxCapacity: '4' } });
  embedded = buildService();
});

/** The statements of every IAM policy attached to the role of the function under `pathPart`. */
function statementsOf(template: Template, pathPart: string): Record<string, unknown>[] {
  const roleId = logicalIdOf(template, 'AWS::IAM::Role', pathPart);
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Record<string, unknown>[]);
}

function environmentOf(template: Template, pathPart: string): Record<string, unknown> {
  const id = logicalIdOf(template, 'AWS::Lambda::Function', pathPart);
  return template.toJSON().Resources[id].Properties.Environment.Variables;
}

/** The functions that run custom SQL (a hook's `context.client.sql` included), and the others. */
const SQL_RUNNERS = ['execute-sql', 'aggregate', 'get-list', 'get-one', 'create', 'batch-create', 'update'];
const NO_SQL = ['changes', 'indexes', 'login-user-info', 'bff-endpoint'];

const clusterId = () => logicalIdOf(stateful, 'AWS::RDS::DBCluster', '/Sql/Cluster/');
/** The cluster's ARN as the stateless stack writes it: from the cluster's identifier, exported by the stateful one. */
const clusterArn = () => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':rds:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      ':cluster:',
      { 'Fn::ImportValue': `DataAccessService-live-Stateful:ExportsOutputRef${clusterId()}14137143` },
    ],
  ],
});
const secretImport = (name: 'Writer' | 'Query') => ({
  'Fn::ImportValue': Match.stringLikeRegexp(
    `^DataAccessService-live-Stateful:ExportsOutputRefSql${name}SecretAttachment`,
  ),
});

/** The statements granting `action`, with their resources as a list. */
function grants(statements: Record<string, unknown>[], action: string): unknown[] {
  return statements
    .filter((statement) => ([] as unknown[]).concat(statement.Action).includes(action))
    .flatMap((statement) => ([] as unknown[]).concat(statement.Resource));
}

describe('the Aurora cluster', () => {
  it('is Aurora MySQL Serverless v2 3.10 with the Data API, encrypted, protected and snapshotted in production', () => {
    const [cluster] = Object.values(stateful.findResources('AWS::RDS::DBCluster'));
    expect(cluster?.DeletionPolicy).toBe('Snapshot');
    expect(cluster?.Properties).toMatchObject({
      DBClusterIdentifier: 'data-access-service-live-sql',
      Engine: 'aurora-mysql',
      EngineVersion: '8.0.mysql_aurora.3.10.0',
      DatabaseName: 'mirror',
      EnableHttpEndpoint: true,
      StorageEncrypted: true,
      DeletionProtection: true,
      ServerlessV2ScalingConfiguration: { MinCapacity: 0.5, MaxCapacity: 16 },
      BackupRetentionPeriod: 14,
    });
    stateful.hasResourceProperties('AWS::RDS::DBInstance', {
      DBInstanceClass: 'db.serverless',
      Engine: 'aurora-mysql',
      PubliclyAccessible: false,
    });
  });

  it('may pause at 0 ACUs outside production, unprotected and deleted with its stack', () => {
    const [cluster] = Object.values(paused.statefulTemplate.findResources('AWS::RDS::DBCluster'));
    expect(cluster?.DeletionPolicy).toBe('Delete');
    expect(cluster?.Properties).toMatchObject({
      DeletionProtection: false,
      EnableHttpEndpoint: true,
      StorageEncrypted: true,
      ServerlessV2ScalingConfiguration: { MinCapacity: 0, MaxCapacity: 4, SecondsUntilAutoPause: 600 },
    });
  });

  it('sits in isolated subnets of its own VPC: no NAT, no internet gateway, no route out, no security group rule', () => {
    stateful.resourceCountIs('AWS::EC2::VPC', 1);
    stateful.resourceCountIs('AWS::EC2::NatGateway', 0);
    stateful.resourceCountIs('AWS::EC2::InternetGateway', 0);
    stateful.resourceCountIs('AWS::EC2::Route', 0);
    stateful.resourceCountIs('AWS::EC2::Subnet', 2);
    for (const subnet of Object.values(stateful.findResources('AWS::EC2::Subnet'))) {
      expect(subnet.Properties.MapPublicIpOnLaunch).toBe(false);
    }
    const groups = Object.values(stateful.findResources('AWS::EC2::SecurityGroup'));
    expect(groups).toHaveLength(1);
    expect(groups[0]?.Properties.SecurityGroupIngress).toBeUndefined();
    // CDK writes a rule that matches nothing when a group may not reach out: no egress at all.
    expect(groups[0]?.Properties.SecurityGroupEgress).toEqual([
      {
        CidrIp: '255.255.255.255/32',
        Description: 'Disallow all traffic',
        FromPort: 252,
        IpProtocol: 'icmp',
        ToPort: 86,
      },
    ]);
    stateful.resourceCountIs('AWS::EC2::SecurityGroupIngress', 0);
  });

  it('has a writer and a query user, each with a generated secret of its own', () => {
    stateful.hasResourceProperties('AWS::SecretsManager::Secret', {
      Name: 'data-access-service/live/sql/writer',
      GenerateSecretString: Match.objectLike({ SecretStringTemplate: '{"username":"das_writer"}' }),
    });
    stateful.hasResourceProperties('AWS::SecretsManager::Secret', {
      Name: 'data-access-service/live/sql/query',
      GenerateSecretString: Match.objectLike({ SecretStringTemplate: '{"username":"das_query"}' }),
    });
    stateful.resourceCountIs('AWS::SecretsManager::SecretTargetAttachment', 2);
  });

  it('is named as `das sql status --stage` finds it: the cluster, its database, the query secret, the stage', () => {
    expect([sqlClusterIdentifierFor('live'), SQL_DATABASE]).toEqual(['data-access-service-live-sql', 'mirror']);
    stateful.hasResourceProperties('AWS::RDS::DBCluster', {
      DBClusterIdentifier: sqlClusterIdentifierFor('live'),
      DatabaseName: SQL_DATABASE,
    });
    stateful.hasResourceProperties('AWS::SecretsManager::Secret', { Name: sqlSecretNameFor('live', 'query') });
    // Every stage has its default signing secret: without a query secret beside it, the stage is on embedded.
    stateful.hasResourceProperties('AWS::SecretsManager::Secret', { Name: defaultSecretNameFor('live') });
    embedded.statefulTemplate.hasResourceProperties('AWS::SecretsManager::Secret', {
      Name: defaultSecretNameFor('dev'),
    });
    embedded.statefulTemplate.resourcePropertiesCountIs(
      'AWS::SecretsManager::Secret',
      { Name: Match.stringLikeRegexp('/sql/') },
      0,
    );
  });

  it('is not there on the embedded engine, the default outside production', () => {
    embedded.statefulTemplate.resourceCountIs('AWS::RDS::DBCluster', 0);
    embedded.statefulTemplate.resourceCountIs('AWS::EC2::VPC', 0);
    embedded.statelessTemplate.resourceCountIs('AWS::Events::Rule', 0);
    expect(environmentOf(embedded.statelessTemplate, '/Op-execute-sql/')).not.toHaveProperty('SQL_ENGINE');
  });
});

describe('the query functions', () => {
  it('run SQL on Aurora: execute-sql, aggregate and every operation a hook may run in get the cluster, its database and both secrets named', () => {
    for (const operation of SQL_RUNNERS) {
      const env = environmentOf(stateless, `/Op-${operation}/`);
      expect(env).toMatchObject({ SQL_ENGINE: 'aurora', SQL_CLUSTER_ARN: clusterArn(), SQL_DATABASE: 'mirror' });
      expect(JSON.stringify(env.SQL_QUERY_SECRET_ARN)).toMatch(/ExportsOutputRefSqlQuerySecretAttachment/);
      // Named, as the engine's environment describes it; the role below may not read it.
      expect(JSON.stringify(env.SQL_WRITER_SECRET_ARN)).toMatch(/ExportsOutputRefSqlWriterSecretAttachment/);
    }
    for (const operation of NO_SQL) {
      expect(environmentOf(stateless, `/Op-${operation}/`)).not.toHaveProperty('SQL_ENGINE');
    }
  });

  it("give the hooks' operations the same, whether the configuration hooks them or not", () => {
    // The test configuration hooks get-one only; one without hooks gives the five the same environment and role.
    expect(TEST_CONFIG.hooks?.map((hook) => hook.operation)).toEqual(['get-one']);
    const unhooked = buildService({
      context: { stage: 'live', production: 'true', alarmEmail: 'oncall@example.com' },
      config: { ...TEST_CONFIG, hooks: [], functions: [] },
    });
    for (const operation of HOOK_OPERATIONS) {
      expect(environmentOf(unhooked.statelessTemplate, `/Op-${operation}/`)).toMatchObject({ SQL_ENGINE: 'aurora' });
      expect(
        grants(statementsOf(unhooked.statelessTemplate, `/Op-${operation}/`), 'rds-data:ExecuteStatement'),
      ).toEqual([clusterArn()]);
    }
  });

  it('may call the Data API on that cluster and read the query secret, never the writer secret', () => {
    for (const operation of SQL_RUNNERS) {
      const statements = statementsOf(stateless, `/Op-${operation}/`);
      expect(statements).toContainEqual({
        Action: ['rds-data:BeginTransaction', 'rds-data:ExecuteStatement', 'rds-data:RollbackTransaction'],
        Effect: 'Allow',
        Resource: clusterArn(),
      });
      expect(JSON.stringify(grants(statements, 'secretsmanager:GetSecretValue'))).toMatch(
        /ExportsOutputRefSqlQuerySecretAttachment/,
      );
      expect(JSON.stringify(statements)).not.toContain('SqlWriterSecret');
      expect(JSON.stringify(statements)).not.toMatch(/rds-data:(BatchExecuteStatement|CommitTransaction)/);
    }
    for (const operation of NO_SQL) {
      const statements = JSON.stringify(statementsOf(stateless, `/Op-${operation}/`));
      expect(statements).not.toContain('rds-data');
      expect(statements).not.toContain('SqlQuerySecret');
    }
  });

  it('stay out of the VPC', () => {
    for (const fn of Object.values(stateless.findResources('AWS::Lambda::Function'))) {
      expect(fn.Properties.VpcConfig).toBeUndefined();
    }
  });
});

describe('the mirror function', () => {
  it('is started every minute with the cluster, database and writer secret, a failed run going to its queue', () => {
    const mirrorId = logicalIdOf(stateless, 'AWS::Lambda::Function', '/SqlMirror/Mirror/');
    const queueId = logicalIdOf(stateless, 'AWS::SQS::Queue', '/SqlMirror/MirrorFailures/');
    const [rule] = Object.values(stateless.findResources('AWS::Events::Rule'));
    expect(rule?.Properties.ScheduleExpression).toBe('rate(1 minute)');
    expect(rule?.Properties.Targets).toHaveLength(1);
    expect(rule?.Properties.Targets[0]).toMatchObject({
      Arn: { 'Fn::GetAtt': [mirrorId, 'Arn'] },
      DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queueId, 'Arn'] } },
      RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 120 },
    });
    const input = JSON.stringify(rule?.Properties.Targets[0].Input);
    expect(input).toContain('{\\"clusterArn\\":\\"arn:');
    expect(input).toContain('\\",\\"database\\":\\"mirror\\",\\"writerSecretArn\\":\\"');
    expect(input).toMatch(/ExportsOutputRefSqlWriterSecretAttachment/);
    expect(input).not.toMatch(/SqlQuerySecret/);
    stateless.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: mirrorId },
      MaximumRetryAttempts: 0,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
    });
    const fn = stateless.toJSON().Resources[mirrorId].Properties;
    expect(fn.Timeout).toBe(90);
    expect(fn.VpcConfig).toBeUndefined();
  });

  it('reads the change log, the records and the catalog, and writes through the Data API with the writer secret only', () => {
    const statements = statementsOf(stateless, '/SqlMirror/MirrorRole/');
    const table = (name: string) => ({
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':dynamodb:',
          { Ref: 'AWS::Region' },
          ':',
          { Ref: 'AWS::AccountId' },
          `:table/${name}`,
        ],
      ],
    });
    const events = table('data-access-service-live-events');
    const feed = table('data-access-service-live-events/index/feed');
    expect(statements).toContainEqual({ Action: 'rds-data:ExecuteStatement', Effect: 'Allow', Resource: clusterArn() });
    expect(grants(statements, 'dynamodb:BatchGetItem')).toEqual([events, feed]);
    expect(grants(statements, 'dynamodb:Query')).toEqual([events, feed, table('data-access-service-live-records')]);
    expect(grants(statements, 'dynamodb:GetItem')).toEqual([table('data-access-service-live-catalog')]);
    expect(JSON.stringify(grants(statements, 'secretsmanager:GetSecretValue'))).toMatch(
      /^\[\{"Fn::ImportValue":"DataAccessService-live-Stateful:ExportsOutputRefSqlWriterSecretAttachment\w+"\}\]$/,
    );
    const text = JSON.stringify(statements);
    expect(text).not.toContain('SqlQuerySecret');
    expect(text).not.toMatch(/dynamodb:(Put|Update|Delete|BatchWrite)/);
  });

  it('makes the query user on deploy, as the writer with the query secret', () => {
    stateless.hasResourceProperties('Custom::SqlQueryUser', {
      ClusterArn: clusterArn(),
      Database: 'mirror',
      WriterSecretArn: secretImport('Writer'),
      QuerySecretArn: secretImport('Query'),
    });
    const text = JSON.stringify(statementsOf(stateless, '/SqlMirror/QueryUserRole/'));
    expect(text).toContain('SqlQuerySecretAttachment');
    expect(text).toContain('SqlWriterSecretAttachment');
  });

  it('alarms on a failed run and on a lag above 60 s for 5 minutes (or no lag reported), and shows the lag', () => {
    stateless.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-live-sql-mirror-failures',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 1,
    });
    stateless.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'data-access-service-live-sql-mirror-lag',
      Namespace: 'DataAccessService/live',
      MetricName: 'sqlMirrorLagSeconds',
      Statistic: 'Maximum',
      Period: 60,
      EvaluationPeriods: 5,
      Threshold: 60,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'breaching',
    });
    const [dashboard] = Object.values(stateless.findResources('AWS::CloudWatch::Dashboard'));
    const body = JSON.stringify(dashboard?.Properties.DashboardBody);
    expect(body).toContain('SQL mirror lag behind the change log (s)');
    expect(body).toContain('sqlMirrorLagSeconds');
    expect(body).toContain('sqlMirrorBackfilling');
    const embeddedBody = JSON.stringify(
      Object.values(embedded.statelessTemplate.findResources('AWS::CloudWatch::Dashboard'))[0]?.Properties
        .DashboardBody,
    );
    expect(embeddedBody).not.toContain('sqlMirrorLagSeconds');
  });
});
