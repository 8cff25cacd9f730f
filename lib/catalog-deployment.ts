/**
 * Deploys the configuration file: a custom resource (custom-resources Provider around functions/deploy-catalog.ts)
 * whose properties hold the configuration without its key material. A change of content changes the
 * properties, so CloudFormation sends an Update and the new catalog is written on that deploy.
 */
import { CustomResource, Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, type CfnFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import type { CatalogConfig } from '../shared/catalog/schema';
import { withoutSecrets } from '../shared/catalog-store/catalog-store';
import { acknowledge } from './nag-acknowledgements';
import { FUNCTION_BUNDLING } from './operation-function';

/**
 * CloudFormation invokes custom resources asynchronously, and an asynchronous Lambda event is at most 256 KB;
 * past this size the deploy would fail late and obscurely, so synth refuses it early.
 */
export const MAX_DEPLOYED_CONFIG_BYTES = 200_000;

export interface CatalogDeploymentProps {
  /** Physical name of the catalog table (created by the stateful stack). */
  catalogTableName: string;
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
    role.addToPolicy(
      new PolicyStatement({
        // GetItem: the catalog being replaced holds the functions' previous versions (catalog-resource.ts).
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem'],
        resources: [
          Stack.of(this).formatArn({ service: 'dynamodb', resource: 'table', resourceName: props.catalogTableName }),
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
      timeout: Duration.seconds(60),
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

    this.resource = new CustomResource(this, 'Catalog', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::DeployedCatalog',
      properties: { TableName: props.catalogTableName, Config: configJson },
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
}
