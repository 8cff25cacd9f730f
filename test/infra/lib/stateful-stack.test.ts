/** The stateful stack: tables built from the shared definitions, and generated secrets per application. */
import { Match } from 'aws-cdk-lib/assertions';
import { EXECUTE_SQL_REQUEST_LIMIT_MS } from '../../../shared/operations/execute-sql';
import { MAX_INVOCATION_MS } from '../../../shared/storage/record-counter';
import {
  type BuiltService,
  buildService,
  LOCAL_ACCESS_KEY,
  LOCAL_DEFAULT_SECRET,
  LOCAL_SIGNING_SECRET,
} from '../../support/service-fixture';

let service: BuiltService;

beforeAll(() => {
  service = buildService();
});

const gsi = (n: number) => ({
  IndexName: `gsi${n}`,
  KeySchema: [
    { AttributeName: '@pk', KeyType: 'HASH' },
    { AttributeName: `@ix${n}`, KeyType: 'RANGE' },
  ],
  Projection: { ProjectionType: 'KEYS_ONLY' },
});

describe('tables', () => {
  it('creates exactly the records, catalog, quota and events tables', () => {
    service.statefulTemplate.resourceCountIs('AWS::DynamoDB::Table', 4);
  });

  it('builds the records table with the dataset partition, id sort key, five keys-only generic indexes and the count index', () => {
    service.statefulTemplate.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: 'data-access-service-dev-records',
      KeySchema: [
        { AttributeName: '@pk', KeyType: 'HASH' },
        { AttributeName: '@sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: '@pk', AttributeType: 'S' },
        { AttributeName: '@sk', AttributeType: 'S' },
        { AttributeName: '@ix1', AttributeType: 'S' },
        { AttributeName: '@ix2', AttributeType: 'S' },
        { AttributeName: '@ix3', AttributeType: 'S' },
        { AttributeName: '@ix4', AttributeType: 'S' },
        { AttributeName: '@ix5', AttributeType: 'S' },
        { AttributeName: '@e', AttributeType: 'S' },
      ],
      GlobalSecondaryIndexes: [
        gsi(1),
        gsi(2),
        gsi(3),
        gsi(4),
        gsi(5),
        {
          IndexName: 'counted',
          KeySchema: [
            { AttributeName: '@e', KeyType: 'HASH' },
            { AttributeName: '@sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['@n', '@done'] },
        },
      ],
      // Change items of custom SQL expire; the attribute is outside the field-name alphabet.
      TimeToLiveSpecification: { AttributeName: '@expires', Enabled: true },
    });
  });

  it('gives execute-sql a timeout above what one of its requests may take, so a query answers 2001 first', () => {
    const functions = service.statelessTemplate.findResources('AWS::Lambda::Function');
    const sql = Object.entries(functions).filter(([id]) => id.startsWith('Opexecutesql'));
    expect(sql).toHaveLength(1);
    expect(sql[0]?.[1].Properties.Timeout * 1000).toBeGreaterThanOrEqual(EXECUTE_SQL_REQUEST_LIMIT_MS + 1000);
  });

  it('keeps every operation function within the invocation bound the record counter settles by', () => {
    const functions = service.statelessTemplate.findResources('AWS::Lambda::Function');
    const operations = Object.entries(functions).filter(([id]) => id.startsWith('Op'));
    expect(operations.length).toBeGreaterThanOrEqual(5);
    for (const [, fn] of operations) {
      expect(fn.Properties.Timeout * 1000).toBeLessThanOrEqual(MAX_INVOCATION_MS);
    }
  });

  it('bills every table on demand, with point-in-time recovery and the AWS managed KMS key', () => {
    const tables = service.statefulTemplate.findResources('AWS::DynamoDB::Table');
    for (const table of Object.values(tables)) {
      expect(table.Properties).toMatchObject({
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
      });
      // AWS managed key: SSE on, no customer key id.
      expect(table.Properties.SSESpecification.KMSMasterKeyId).toBeUndefined();
    }
  });

  it('gives the quota table its TTL attribute and a single string key', () => {
    service.statefulTemplate.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: 'data-access-service-dev-quota',
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
  });

  it('gives the catalog table a single string key and no index', () => {
    service.statefulTemplate.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: 'data-access-service-dev-catalog',
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      GlobalSecondaryIndexes: Match.absent(),
    });
  });

  it('retains the records table when the stack is deleted, but not the catalog or quota tables', () => {
    service.statefulTemplate.hasResource('AWS::DynamoDB::Table', {
      Properties: { TableName: 'data-access-service-dev-records' },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
    for (const name of ['data-access-service-dev-catalog', 'data-access-service-dev-quota']) {
      service.statefulTemplate.hasResource('AWS::DynamoDB::Table', {
        Properties: { TableName: name },
        DeletionPolicy: 'Delete',
      });
    }
  });
});

describe('secrets', () => {
  it('creates one secret per application and one default signing secret', () => {
    service.statefulTemplate.resourceCountIs('AWS::SecretsManager::Secret', 3);
  });

  it.each(['app-demo', 'app-reports'])('generates the access key of %s under <prefix>/apps/<appCode>', (appCode) => {
    service.statefulTemplate.hasResourceProperties('AWS::SecretsManager::Secret', {
      Name: `data-access-service/dev/apps/${appCode}`,
      GenerateSecretString: {
        SecretStringTemplate: '{}',
        GenerateStringKey: 'accessKey',
        ExcludePunctuation: true,
        PasswordLength: 40,
      },
      SecretString: Match.absent(),
    });
  });

  it('generates the default signing secret', () => {
    service.statefulTemplate.hasResourceProperties('AWS::SecretsManager::Secret', {
      Name: 'data-access-service/dev/default',
      GenerateSecretString: {
        SecretStringTemplate: '{}',
        GenerateStringKey: 'signingSecret',
        ExcludePunctuation: true,
        PasswordLength: 64,
      },
      SecretString: Match.absent(),
    });
  });

  it('never copies key material from the configuration file into either template', () => {
    const templates = JSON.stringify([service.statefulTemplate.toJSON(), service.statelessTemplate.toJSON()]);
    for (const secret of [LOCAL_ACCESS_KEY, LOCAL_SIGNING_SECRET, LOCAL_DEFAULT_SECRET]) {
      expect(templates).not.toContain(secret);
    }
  });
});

describe('stage', () => {
  it('derives every name from the stage given in context', () => {
    const prod = buildService({ context: { stage: 'prod' } });
    prod.statefulTemplate.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: 'data-access-service-prod-records',
    });
    prod.statefulTemplate.hasResourceProperties('AWS::SecretsManager::Secret', {
      Name: 'data-access-service/prod/apps/app-demo',
    });
    expect(prod.stateful.stackName).toBe('DataAccessService-prod-Stateful');
    expect(prod.stateless.stackName).toBe('DataAccessService-prod-Stateless');
  });
});
