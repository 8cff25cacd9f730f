/**
 * The stage's optional customer-managed KMS key (`-c customerManagedKey=true`): it encrypts the tables, the
 * secrets, the log groups and the alarm topic, so a partner's security team controls (and can revoke) every use
 * of it. Its policy lets in exactly the services that use it on their own behalf:
 *
 * - CloudWatch Logs encrypts log groups itself, for log groups of this account and region only;
 * - CloudWatch alarms publish to the encrypted alarm topic, which needs a data key from it.
 *
 * DynamoDB and Secrets Manager use the key through grants and the callers' own permissions (the functions get
 * kms:Decrypt through Secrets Manager only). The account root keeps administering it (CDK's default statement),
 * it rotates yearly, and it is retained: data encrypted under a deleted key is lost.
 */
import { ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Effect, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

export interface ServiceKeyProps {
  stage: string;
}

export class ServiceKey extends Construct {
  readonly key: Key;

  constructor(scope: Construct, id: string, props: ServiceKeyProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.key = new Key(this, 'Key', {
      alias: `alias/data-access-service-${props.stage}`,
      description: `Data access service (${props.stage}): tables, secrets, logs and alarm topic`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchLogsEncryptsThisAccountsLogGroups',
        effect: Effect.ALLOW,
        principals: [new ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
        actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
        resources: ['*'],
        conditions: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': stack.formatArn({
              service: 'logs',
              resource: 'log-group',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
    this.key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsPublishToTheEncryptedTopic',
        effect: Effect.ALLOW,
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    );
  }
}
