/**
 * The stateful half of the service: the DynamoDB tables (built from the shared table definitions, so deployed
 * and local tables cannot drift) and the Secrets Manager secrets that hold the applications' keys. It changes
 * rarely; code deploys go to the stateless stack and never touch it.
 *
 * Tables and secrets have names derived from the stage. The stateless stack refers to them by those names, not
 * through CloudFormation exports: exports would lock the stateful stack whenever a consumer changes (the
 * classic "export in use" deadlock), and names give IAM policies and log lines an operator can read.
 */
import { RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { CatalogConfig } from '../shared/catalog/schema';
import { webhookSecretName } from '../shared/changes/webhook-secrets';
import {
  CATALOG_TABLE,
  EVENTS_TABLE,
  type KeyAttribute,
  QUOTA_TABLE,
  RECORDS_TABLE,
  type TableDefinition,
  tableNameFor,
} from '../shared/storage/table-definitions';
import { acknowledge } from './nag-acknowledgements';
import { ServiceKey } from './service-key';
import { SqlCluster, type SqlClusterResource } from './sql-cluster';

export interface StatefulStackProps extends StackProps {
  stage: string;
  /**
   * Production: every table is retained with deletion protection, and secrets are retained, so no stack
   * deletion or replacement can take data or keys with it.
   */
  production?: boolean;
  /** Create a customer-managed KMS key for the tables, secrets, logs and alarm topic (else AWS managed keys). */
  customerManagedKey?: boolean;
  /** The validated configuration: one secret is created per application it declares. */
  config: CatalogConfig;
  /** Custom SQL on Aurora (`sqlEngine=aurora`): the cluster's capacity in ACUs; absent, no cluster. */
  sql?: { minCapacity: number; maxCapacity: number };
}

/** A table as the stateless stack knows it: its physical name and the shared definition it was built from. */
export interface TableResource {
  tableName: string;
  definition: TableDefinition;
}

/** What the stateless stack needs from this one, typed so a missing piece is a compile error. */
export interface StatefulResources {
  tables: { records: TableResource; catalog: TableResource; quota: TableResource; events: TableResource };
  /** The records table's stream, which the change log's writer reads (a cross-stack reference: it has no name). */
  recordsStreamArn: string;
  /** Webhook signing secrets, one per subscription: `<secretPrefix>/webhooks/<id>`. */
  webhookSecretNames: readonly string[];
  /** Application secrets are named `<secretPrefix>/apps/<appCode>` (the runtime's key store derives the name). */
  secretPrefix: string;
  /** Names of the application secrets, one per application of the configuration. */
  applicationSecretNames: readonly string[];
  /** Name of the deployment's default signing secret (DEFAULT_SECRET_ID accepts a name). */
  defaultSecretName: string;
  /** The customer-managed key, when the stage has one: logs and the alarm topic use it too. */
  encryptionKey?: IKey;
  /** The Aurora cluster of custom SQL and its two secrets, when the stage runs custom SQL there. */
  sql?: SqlClusterResource;
}

const ATTRIBUTE_TYPES: Record<KeyAttribute['type'], AttributeType> = {
  S: AttributeType.STRING,
  N: AttributeType.NUMBER,
  B: AttributeType.BINARY,
};

function attribute(key: KeyAttribute): { name: string; type: AttributeType } {
  return { name: key.name, type: ATTRIBUTE_TYPES[key.type] };
}

/** The physical table name of a definition in a stage (storage's rule, which the tools share). */
export { tableNameFor };

/** The secret name prefix of a stage; the runtime reads it from SECRET_PREFIX. */
export function secretPrefixFor(stage: string): string {
  return `data-access-service/${stage}`;
}

export class StatefulStack extends Stack {
  readonly recordsTable: Table;
  readonly catalogTable: Table;
  readonly quotaTable: Table;
  readonly eventsTable: Table;
  readonly applicationSecrets: ReadonlyMap<string, Secret>;
  readonly defaultSecret: Secret;
  readonly resources: StatefulResources;
  readonly encryptionKey?: IKey;
  readonly sqlCluster?: SqlCluster;
  private readonly production: boolean;

  constructor(scope: Construct, id: string, props: StatefulStackProps) {
    super(scope, id, props);
    const { stage } = props;
    this.production = props.production ?? false;
    if (props.customerManagedKey) this.encryptionKey = new ServiceKey(this, 'ServiceKey', { stage }).key;
    // Records are the partners' data: they survive a stack deletion. Outside production the catalog is rewritten
    // on every deploy and quota items are minutes-to-a-day counters, so neither is worth an orphaned table; in
    // production every table is retained (a mistaken deletion must not reset quotas or lose a deploy's catalog).
    const disposable = this.production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    this.recordsTable = this.createTable(stage, RECORDS_TABLE, RemovalPolicy.RETAIN);
    this.catalogTable = this.createTable(stage, CATALOG_TABLE, disposable);
    this.quotaTable = this.createTable(stage, QUOTA_TABLE, disposable);
    // The change log is the datasets' audit trail for its retention window: kept like the records.
    this.eventsTable = this.createTable(stage, EVENTS_TABLE, RemovalPolicy.RETAIN);
    // Secrets: a deleted key cuts every partner off; in production they outlive the stack.
    const secretRemovalPolicy = this.production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const secretKey = this.encryptionKey ? { encryptionKey: this.encryptionKey } : {};

    const secretPrefix = secretPrefixFor(stage);
    const secrets = new Map<string, Secret>();
    for (const app of props.config.applications) {
      const secret = new Secret(this, `AppSecret-${app.appCode}`, {
        secretName: `${secretPrefix}/apps/${app.appCode}`,
        description: `Access key of application ${app.appCode} (${stage}); generated, never taken from the configuration file`,
        generateSecretString: {
          secretStringTemplate: '{}',
          generateStringKey: 'accessKey',
          excludePunctuation: true,
          passwordLength: 40,
        },
        removalPolicy: secretRemovalPolicy,
        ...secretKey,
      });
      secrets.set(app.appCode, secret);
    }
    this.applicationSecrets = secrets;
    // One signing secret per webhook subscription, generated here, never in the configuration file: 48 characters of
    // the base64 alphabet, which the delivery reads as `whsec_` + base64 of 36 random bytes (Standard Webhooks).
    const webhookSecretNames: string[] = [];
    for (const webhook of props.config.webhooks ?? []) {
      const name = webhookSecretName(secretPrefix, webhook.id);
      new Secret(this, `WebhookSecret-${webhook.id}`, {
        secretName: name,
        description: `Signing secret of webhook ${webhook.id} (${stage}); share it with the receiver`,
        generateSecretString: {
          secretStringTemplate: '{}',
          generateStringKey: 'secret',
          excludePunctuation: true,
          passwordLength: 48,
        },
        removalPolicy: secretRemovalPolicy,
        ...secretKey,
      });
      webhookSecretNames.push(name);
    }
    const defaultSecretName = `${secretPrefix}/default`;
    this.defaultSecret = new Secret(this, 'DefaultSigningSecret', {
      secretName: defaultSecretName,
      description: `Default signing secret of the ${stage} deployment`,
      generateSecretString: {
        secretStringTemplate: '{}',
        generateStringKey: 'signingSecret',
        excludePunctuation: true,
        passwordLength: 64,
      },
      removalPolicy: secretRemovalPolicy,
      ...secretKey,
    });

    // Every secret of this stack is an application key or the signing secret, so the reason holds stack-wide.
    acknowledge(this, [
      {
        id: 'AwsSolutions-SMG4',
        reason:
          'Keys are shared with partner clients, so rotation needs the partner in the loop: it is the documented ' +
          'two-active-keys procedure (docs/deploying.md), not an automatic rotation Lambda that would cut callers off.',
      },
    ]);

    if (props.sql) {
      this.sqlCluster = new SqlCluster(this, 'Sql', {
        stage,
        secretPrefix,
        production: this.production,
        minCapacity: props.sql.minCapacity,
        maxCapacity: props.sql.maxCapacity,
        ...(this.encryptionKey ? { encryptionKey: this.encryptionKey } : {}),
      });
    }

    this.resources = {
      tables: {
        records: { tableName: tableNameFor(stage, RECORDS_TABLE), definition: RECORDS_TABLE },
        catalog: { tableName: tableNameFor(stage, CATALOG_TABLE), definition: CATALOG_TABLE },
        quota: { tableName: tableNameFor(stage, QUOTA_TABLE), definition: QUOTA_TABLE },
        events: { tableName: tableNameFor(stage, EVENTS_TABLE), definition: EVENTS_TABLE },
      },
      recordsStreamArn: this.recordsTable.tableStreamArn as string,
      webhookSecretNames,
      secretPrefix,
      applicationSecretNames: props.config.applications.map((app) => `${secretPrefix}/apps/${app.appCode}`),
      defaultSecretName,
      ...(this.encryptionKey ? { encryptionKey: this.encryptionKey } : {}),
      ...(this.sqlCluster ? { sql: this.sqlCluster.resource } : {}),
    };
  }

  /**
   * One table from its shared definition. On-demand billing (traffic is bursty and per-partner, no capacity to
   * plan); point-in-time recovery (35 days of restore points for a mistaken bulk write); encryption with the AWS
   * managed key `aws/dynamodb` by default: key use is audited in CloudTrail like a customer key, but no key policy
   * has to be administered in a partner's account. A stage with `customerManagedKey` uses its own key instead
   * (DynamoDB holds a grant on it, so the functions need no kms:* permission for tables). Production tables have
   * deletion protection: deleting one takes two deliberate steps.
   */
  private createTable(stage: string, definition: TableDefinition, removalPolicy: RemovalPolicy): Table {
    const table = new Table(this, definition.logicalName, {
      tableName: tableNameFor(stage, definition),
      partitionKey: attribute(definition.partitionKey),
      ...(definition.sortKey ? { sortKey: attribute(definition.sortKey) } : {}),
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      ...(this.encryptionKey
        ? { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: this.encryptionKey }
        : { encryption: TableEncryption.AWS_MANAGED }),
      deletionProtection: this.production,
      ...(definition.timeToLiveAttribute ? { timeToLiveAttribute: definition.timeToLiveAttribute } : {}),
      ...(definition.stream ? { stream: StreamViewType[definition.stream] } : {}),
      removalPolicy,
    });
    for (const index of definition.globalSecondaryIndexes) {
      table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: attribute(index.partitionKey),
        sortKey: attribute(index.sortKey),
        projectionType: ProjectionType[index.projection],
        ...(index.nonKeyAttributes ? { nonKeyAttributes: [...index.nonKeyAttributes] } : {}),
      });
    }
    return table;
  }
}
