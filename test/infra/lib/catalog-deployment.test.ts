/**
 * Deploying the configuration: the custom resource carries the configuration without key material, so a
 * change of content is an Update; its function writes that catalog (tested here against dynalite).
 */
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Context } from 'aws-lambda';
import dynalite from 'dynalite';
import { CatalogDeployment } from '../../../lib/catalog-deployment';
import { createDocumentClient } from '../../../shared/aws/dynamodb';
import type { FunctionConfig } from '../../../shared/catalog/schema';
import { applyDeployResource } from '../../../shared/catalog-store/catalog-resource';
import { readCatalog, readDeployedCatalog, withoutSecrets } from '../../../shared/catalog-store/catalog-store';
import { RECORDS_TABLE } from '../../../shared/storage/table-definitions';
import { toCreateTableInput } from '../../../shared/storage/table-setup';
import {
  arnOf,
  type BuiltService,
  buildService,
  logicalIdOf,
  PROJECT_ROOT,
  TEST_CONFIG,
} from '../../support/service-fixture';

let service: BuiltService;
let template: Template;

beforeAll(() => {
  service = buildService();
  template = service.statelessTemplate;
});

describe('custom resource', () => {
  it('passes the catalog table and the configuration without keys', () => {
    const resources = Object.values(template.findResources('Custom::DeployedCatalog'));
    expect(resources).toHaveLength(1);
    const properties = resources[0]?.Properties;
    expect(properties.TableName).toBe('data-access-service-dev-catalog');
    const deployed = JSON.parse(properties.Config);
    expect(deployed.defaultSigningSecret).toBeUndefined();
    expect(deployed.applications).toEqual([
      {
        appCode: 'app-demo',
        name: 'Demo CRM',
        grants: [{ datasetCode: 'orders', operations: ['read', 'create', 'update'] }],
      },
      { appCode: 'app-reports', grants: [{ datasetCode: 'orders', operations: ['read'] }] },
    ]);
    expect(deployed.datasets).toEqual(TEST_CONFIG.datasets);
  });

  it('gives the deploy function GetItem and PutItem on the catalog, reads of the records, PutItem of a first count, and the start of index builds', () => {
    const roleId = logicalIdOf(template, 'AWS::IAM::Role', '/CatalogDeployment/Role/');
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: roleId }],
      PolicyDocument: {
        Statement: [
          {
            Effect: 'Allow',
            Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
            Resource: {
              'Fn::GetAtt': [logicalIdOf(template, 'AWS::Logs::LogGroup', '/CatalogDeployment/Logs/'), 'Arn'],
            },
          },
          {
            Effect: 'Allow',
            Action: ['dynamodb:GetItem', 'dynamodb:PutItem'],
            Resource: arnOf('dynamodb', 'table/data-access-service-dev-catalog'),
          },
          {
            Effect: 'Allow',
            Action: ['dynamodb:GetItem', 'dynamodb:Query'],
            Resource: [
              arnOf('dynamodb', 'table/data-access-service-dev-records'),
              ...['counted', 'gsi1', 'gsi2', 'gsi3', 'gsi4', 'gsi5'].map((index) =>
                arnOf('dynamodb', `table/data-access-service-dev-records/index/${index}`),
              ),
            ],
          },
          {
            // A new, empty dataset's first record count.
            Effect: 'Allow',
            Action: 'dynamodb:PutItem',
            Resource: arnOf('dynamodb', 'table/data-access-service-dev-records'),
          },
          {
            Effect: 'Allow',
            Action: 'states:StartExecution',
            Resource: arnOf('states', 'stateMachine:data-access-service-dev-index-builds'),
          },
        ],
      },
    });
  });

  it('applies the configuration before any function of the stack is created or updated', () => {
    // CloudFormation creates or updates a resource only after every resource in its DependsOn: a refused
    // configuration fails the catalog resource, and the stack rolls back with every function as it was.
    const catalogId = logicalIdOf(template, 'Custom::DeployedCatalog', '/CatalogDeployment/Catalog/');
    const deployFunction = logicalIdOf(template, 'AWS::Lambda::Function', '/CatalogDeployment/Handler/');
    const functions = Object.entries(template.findResources('AWS::Lambda::Function')).filter(
      ([id, resource]) =>
        id !== deployFunction && !String(resource.Metadata?.['aws:cdk:path']).includes('/CatalogDeployment/'),
    );
    const operations = functions.filter(([, resource]) => String(resource.Metadata?.['aws:cdk:path']).includes('/Op-'));
    expect(operations.length).toBeGreaterThan(5);
    const notAfter = functions
      .filter(([, resource]) => !(resource.DependsOn ?? []).includes(catalogId))
      .map(([, resource]) => resource.Metadata?.['aws:cdk:path']);
    // Only CDK's own helpers (log retention, the provider's framework) may come before it.
    expect(notAfter.filter((path) => /\/(Op-[^/]+|IndexBuilds)\//.test(String(path)))).toEqual([]);
    const machine = logicalIdOf(template, 'AWS::StepFunctions::StateMachine', '/IndexBuilds/');
    expect(template.toJSON().Resources[machine].DependsOn).toContain(catalogId);
    const start = Object.values(template.findResources('Custom::IndexBuildStart'));
    expect(start).toHaveLength(1);
    expect(start[0]?.DependsOn).toEqual(expect.arrayContaining([catalogId, machine]));
  });

  it('refuses at synth a configuration too large for a custom resource event', () => {
    const big = structuredClone(TEST_CONFIG);
    const [dataset] = big.datasets;
    if (!dataset) throw new Error('the test configuration has a dataset');
    dataset.fields = Array.from({ length: 4000 }, (_, i) => ({ name: `field_${i}_${'x'.repeat(40)}`, type: 'string' }));
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Big');
    expect(
      () =>
        new CatalogDeployment(stack, 'Catalog', {
          stage: 'dev',
          catalogTableName: 'catalog',
          records: { tableName: 'records', definition: RECORDS_TABLE },
          config: big,
          projectRoot: PROJECT_ROOT,
          logRetention: RetentionDays.ONE_DAY,
          logRemovalPolicy: RemovalPolicy.DESTROY,
        }),
    ).toThrow(/the configuration is \d+ bytes without secrets; a deployment carries at most 200000/);
  });
});

type DeployCatalogEvent = Parameters<typeof import('../../../functions/deploy-catalog').handler>[0];

describe('deploy-catalog function', () => {
  const server = dynalite({ createTableMs: 0 });
  let raw: DynamoDBClient;
  let handler: typeof import('../../../functions/deploy-catalog').handler;

  const event = (requestType: 'Create' | 'Update' | 'Delete', config: unknown): DeployCatalogEvent =>
    ({
      RequestType: requestType,
      ServiceToken: 'token',
      ResponseURL: 'https://example.com',
      StackId: 'stack',
      RequestId: 'request',
      LogicalResourceId: 'Catalog',
      ResourceType: 'Custom::DeployedCatalog',
      PhysicalResourceId: 'catalog',
      ResourceProperties: {
        ServiceToken: 'token',
        TableName: 'catalog',
        RecordsTableName: 'records',
        Config: JSON.stringify(config),
      },
      OldResourceProperties: {},
    }) as unknown as DeployCatalogEvent;

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = { endpoint, region: 'local', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } };
    // The function builds its client from the default chain; point the chain at dynalite.
    process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoint;
    process.env.AWS_REGION = 'local';
    process.env.AWS_ACCESS_KEY_ID = 'x';
    process.env.AWS_SECRET_ACCESS_KEY = 'x';
    raw = new DynamoDBClient(client);
    await raw.send(
      new CreateTableCommand({
        TableName: 'catalog',
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    await raw.send(new CreateTableCommand(toCreateTableInput(RECORDS_TABLE, 'records')));
    ({ handler } = await import('../../../functions/deploy-catalog'));
  });

  afterAll(async () => {
    raw.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const invoke = (e: DeployCatalogEvent) => handler(e, {} as Context, () => undefined);

  it('writes the configuration as the catalog on create', async () => {
    const result = await invoke(event('Create', withoutSecrets(TEST_CONFIG)));
    expect(result).toEqual({
      PhysicalResourceId: 'catalog',
      Data: { applications: 2, datasets: 1, functions: 1, indexesToBuild: 0, indexesToDrop: 0 },
    });
    expect(await readCatalog(createDocumentClient(raw), 'catalog')).toEqual(withoutSecrets(TEST_CONFIG));
  });

  it('replaces the catalog on update, keeping the same physical id', async () => {
    const changed = { ...withoutSecrets(TEST_CONFIG), defaultPageSize: 50 };
    const result = await invoke(event('Update', changed));
    expect(result).toMatchObject({ PhysicalResourceId: 'catalog' });
    expect((await readCatalog(createDocumentClient(raw), 'catalog'))?.defaultPageSize).toBe(50);
  });

  it('leaves the catalog in place on delete', async () => {
    expect(await invoke(event('Delete', {}))).toEqual({ PhysicalResourceId: 'catalog' });
    expect((await readCatalog(createDocumentClient(raw), 'catalog'))?.defaultPageSize).toBe(50);
  });

  describe("backend functions' versions", () => {
    const table = 'catalog-versions';
    const source = (word: string) =>
      `export default async function fn(params) { return { ...params, word: '${word}' }; }`;
    const fn = (name: string, word: string): FunctionConfig => ({ appCode: 'app-demo', name, source: source(word) });
    // Only the functions change between these deploys; none is hooked, so any set of them is a valid configuration.
    const configWith = (functions: FunctionConfig[]) => ({ ...withoutSecrets(TEST_CONFIG), functions, hooks: [] });
    // Every deploy of this block goes to its own table.
    const deployEvent = (requestType: 'Create' | 'Update', config: unknown): DeployCatalogEvent =>
      ({
        RequestType: requestType,
        PhysicalResourceId: 'catalog',
        ResourceProperties: {
          ServiceToken: 'token',
          TableName: table,
          RecordsTableName: 'records',
          Config: JSON.stringify(config),
        },
      }) as unknown as DeployCatalogEvent;
    const deployAt = (iso: string, functions: FunctionConfig[]) =>
      applyDeployResource(
        deployEvent('Update', configWith(functions)),
        { dynamo: createDocumentClient(raw), stepFunctions: () => new SFNClient({}) },
        () => Date.parse(iso),
      );
    const versions = async () =>
      Object.fromEntries(
        Object.entries((await readDeployedCatalog(createDocumentClient(raw), table))?.functionVersions ?? {}).map(
          ([name, { version, modifiedAtMs }]) => [name, { version, modifiedAt: new Date(modifiedAtMs).toISOString() }],
        ),
      );

    beforeAll(async () => {
      await raw.send(
        new CreateTableCommand({
          TableName: table,
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
    });

    it('gives each function version 1 and the deploy time on the first deploy', async () => {
      const result = await deployAt('2026-03-01T10:00:00.000Z', [fn('greet', 'hello'), fn('tag', 'a')]);
      expect(result).toEqual({
        PhysicalResourceId: 'catalog',
        Data: { applications: 2, datasets: 1, functions: 2, indexesToBuild: 0, indexesToDrop: 0 },
      });
      expect(await versions()).toEqual({
        greet: { version: 1, modifiedAt: '2026-03-01T10:00:00.000Z' },
        tag: { version: 1, modifiedAt: '2026-03-01T10:00:00.000Z' },
      });
    });

    it('keeps the version and time of a function whose source is the same on a later deploy', async () => {
      await deployAt('2026-03-02T11:00:00.000Z', [
        { ...fn('greet', 'hello'), description: 'Now described', timeoutMs: 500 },
        fn('tag', 'a'),
      ]);
      expect(await versions()).toEqual({
        greet: { version: 1, modifiedAt: '2026-03-01T10:00:00.000Z' },
        tag: { version: 1, modifiedAt: '2026-03-01T10:00:00.000Z' },
      });
    });

    it('moves a changed function to the next version at the deploy time, and only that one', async () => {
      await deployAt('2026-03-03T12:00:00.000Z', [fn('greet', 'hi'), fn('tag', 'a')]);
      await deployAt('2026-03-04T13:00:00.000Z', [fn('greet', 'hey'), fn('tag', 'a')]);
      expect(await versions()).toEqual({
        greet: { version: 3, modifiedAt: '2026-03-04T13:00:00.000Z' },
        tag: { version: 1, modifiedAt: '2026-03-01T10:00:00.000Z' },
      });
    });

    it('continues the count of a function that was removed and comes back', async () => {
      await deployAt('2026-03-05T14:00:00.000Z', [fn('greet', 'hey')]);
      expect((await readDeployedCatalog(createDocumentClient(raw), table))?.config.functions).toEqual([
        fn('greet', 'hey'),
      ]);
      await deployAt('2026-03-06T15:00:00.000Z', [fn('greet', 'hey'), fn('tag', 'b')]);
      expect(await versions()).toEqual({
        greet: { version: 3, modifiedAt: '2026-03-04T13:00:00.000Z' },
        tag: { version: 2, modifiedAt: '2026-03-06T15:00:00.000Z' },
      });
    });
  });

  it('fails the deploy, listing the problems, when the configuration is invalid', async () => {
    const invalid = { applications: [], datasets: [{ appCode: 'nobody', datasetCode: 'x', fields: [] }] };
    await expect(invoke(event('Update', invalid))).rejects.toThrow(/deployed configuration: \d+ problem\(s\)/);
  });
});
