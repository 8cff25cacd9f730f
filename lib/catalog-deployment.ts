/**
 * Deploys the configuration file: a custom resource (custom-resources Provider around functions/deploy-catalog.ts)
 * whose properties hold the configuration without its key material. A change of content changes the
 * properties, so CloudFormation sends an Update and the new configuration is applied on that deploy: compared
 * with the one applied last and refused as a whole when incompatible (docs/interface.md §17). Every function of the
 * stack depends on this resource (lib/stateless-stack.ts), so a refused configuration fails the deploy before any
 * function is updated, and the functions that were serving go on serving the configuration applied before.
 *
 * A second resource of the same provider starts a run of the index jobs' state machine once the catalog is applied
 * and the state machine is in place (`startIndexBuilds`).
 */
import { createHash } from 'node:crypto';
import { ArnFormat, CustomResource, Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, type CfnFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import type { CatalogConfig } from '../shared/catalog/schema';
import { withoutSecrets } from '../shared/catalog-store/catalog-store';
import { indexBuildsStateMachineName } from './index-builds';
import { acknowledge } from './nag-acknowledgements';
import { FUNCTION_BUNDLING } from './operation-function';
import type { TableResource } from './stateful-stack';

/**
 * CloudFormation invokes custom resources asynchronously, and an asynchronous Lambda event is at most 256 KB;
 * past this size the deploy would fail late and obscurely, so synth refuses it early.
 */
export const MAX_DEPLOYED_CONFIG_BYTES = 200_000;

export interface CatalogDeploymentProps {
  stage: string;
  /** Physical name of the catalog table (created by the stateful stack). */
  catalogTableName: string;
  /** The records table: a change is planned against the records it holds (read only). */
  records: TableResource;
  config: CatalogConfig;
  projectRoot: string;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  /** The stage's customer-managed key, when it has one, encrypts the log groups. */
  logEncryptionKey?: IKey;
}

export class CatalogDeployment extends Construct {
  readonly resource: CustomResource;
  readonly handler: NodejsFunction;
  private readonly provider: Provider;
  private readonly configDigest: string;

  constructor(scope: Construct, id: string, props: CatalogDeploymentProps) {
    super(scope, id);
    const configJson = JSON.stringify(withoutSecrets(props.config));
    const size = Buffer.byteLength(configJson, 'utf8');
    if (size > MAX_DEPLOYED_CONFIG_BYTES) {
      throw new Error(
        `the configuration is ${size} bytes without secrets; a deployment carries at most ${MAX_DEPLOYED_CONFIG_BYTES}`,
      );
    }

    const logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
      ...(props.logEncryptionKey ? { encryptionKey: props.logEncryptionKey } : {}),
    });
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'Writes the deployed configuration into the catalog table',
    });
    role.addToPolicy(
      new PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn],
      }),
    );
    const stack = Stack.of(this);
    role.addToPolicy(
      new PolicyStatement({
        // GetItem: the configuration applied last, its registry and the functions' previous versions
        // (catalog-resource.ts); PutItem on the condition that nothing else wrote the item meanwhile.
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem'],
        resources: [stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: props.catalogTableName })],
      }),
    );
    const records = stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: props.records.tableName });
    role.addToPolicy(
      new PolicyStatement({
        // The plan's questions about stored records (storage/dataset-probes.ts): reads only.
        actions: ['dynamodb:Query', 'dynamodb:GetItem'],
        resources: [
          records,
          ...props.records.definition.globalSecondaryIndexes.map((index) => `${records}/index/${index.indexName}`),
        ],
      }),
    );
    role.addToPolicy(
      new PolicyStatement({
        // A new, empty dataset's first record count (storage/record-counter.ts, `startCountingEmpty`): a conditional
        // PutItem of one bookkeeping item.
        actions: ['dynamodb:PutItem'],
        resources: [records],
      }),
    );
    role.addToPolicy(
      new PolicyStatement({
        actions: ['states:StartExecution'],
        resources: [
          stack.formatArn({
            service: 'states',
            resource: 'stateMachine',
            resourceName: indexBuildsStateMachineName(props.stage),
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
      }),
    );

    this.handler = new NodejsFunction(this, 'Handler', {
      description: 'Writes the deployed configuration into the catalog table',
      entry: `${props.projectRoot}/functions/deploy-catalog.ts`,
      handler: 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: `${props.projectRoot}/package-lock.json`,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 256,
      // Removing an enum option of an unindexed field reads the dataset's records for it (a few minutes for
      // millions of records); everything else takes a second.
      timeout: Duration.minutes(10),
      role,
      logGroup,
      bundling: FUNCTION_BUNDLING,
    });

    const provider = new Provider(this, 'Provider', {
      onEventHandler: this.handler,
      logGroup: new LogGroup(this, 'ProviderLogs', {
        retention: props.logRetention,
        removalPolicy: props.logRemovalPolicy,
        ...(props.logEncryptionKey ? { encryptionKey: props.logEncryptionKey } : {}),
      }),
    });

    this.provider = provider;
    this.configDigest = createHash('sha256').update(configJson).digest('hex');
    this.resource = new CustomResource(this, 'Catalog', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::DeployedCatalog',
      properties: { TableName: props.catalogTableName, RecordsTableName: props.records.tableName, Config: configJson },
    });

    const handlerLogicalId = Stack.of(this).getLogicalId(this.handler.node.defaultChild as CfnFunction);
    acknowledge(provider, [
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason:
          'The custom-resources Provider framework function is created by the CDK with AWSLambdaBasicExecutionRole; ' +
          'it only relays CloudFormation events to the deploy-catalog function.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${handlerLogicalId}.Arn>:*]`,
        reason:
          'The CDK grants the Provider framework lambda:InvokeFunction on the deploy-catalog function and its ' +
          'versions (<arn>:*); nothing broader.',
      },
    ]);
    acknowledge(this, [
      {
        id: 'AwsSolutions-L1',
        reason:
          'The deploy-catalog function runs on Node.js 22 like the operations (the runtime the design fixes), and the ' +
          "Provider framework function's runtime is chosen by the CDK version, not by this project.",
      },
    ]);
  }

  /**
   * Start a run of the index jobs after each deploy that changes the configuration, once the catalog is applied and
   * the state machine updated (the resource depends on both).
   */
  startIndexBuilds(stateMachine: IStateMachine): CustomResource {
    const start = new CustomResource(this, 'IndexBuildStart', {
      serviceToken: this.provider.serviceToken,
      resourceType: 'Custom::IndexBuildStart',
      properties: { StateMachineArn: stateMachine.stateMachineArn, ConfigDigest: this.configDigest },
    });
    start.node.addDependency(this.resource, stateMachine);
    return start;
  }
}
