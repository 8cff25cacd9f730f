/**
 * One Lambda per operation: runtime, sizing, environment, bundling, and — the point of the project construct —
 * an IAM policy that grants each operation exactly the actions it needs and nothing else.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { SandboxHost } from '../../../../shared/sandbox/sandbox';
import { arnOf, type BuiltService, buildService, logicalIdOf } from '../../../support/service-fixture';

let service: BuiltService;
let template: Template;

beforeAll(() => {
  // The only infra test that runs esbuild: it checks what the bundles contain.
  service = buildService({ bundle: true });
  template = service.statelessTemplate;
});

const OPERATIONS = [
  'get-list',
  'get-one',
  'create',
  'batch-create',
  'update',
  'execute-sql',
  'aggregate',
  'indexes',
  'login-user-info',
  'bff-endpoint',
] as const;
type Operation = (typeof OPERATIONS)[number];

// biome-ignore lint/suspicious/noExplicitAny: a template resource is untyped JSON that the assertions read
function functionOf(operation: Operation): Record<string, any> {
  const id = logicalIdOf(template, 'AWS::Lambda::Function', `/Op-${operation}/Function/`);
  return template.toJSON().Resources[id];
}

/** The statements of the policy attached to an operation's role, without the log and X-Ray statements. */
function dataStatementsOf(operation: Operation): unknown[] {
  const roleId = logicalIdOf(template, 'AWS::IAM::Role', `/Op-${operation}/Role/`);
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((policy) =>
    JSON.stringify(policy.Properties.Roles).includes(`"${roleId}"`),
  );
  expect(policies).toHaveLength(1);
  const statements: Array<{ Action: string | string[] }> = policies[0]?.Properties.PolicyDocument.Statement;
  return statements.filter((s) => ![s.Action].flat().some((a) => a.startsWith('logs:') || a.startsWith('xray:')));
}

const RECORDS = arnOf('dynamodb', 'table/data-access-service-dev-records');
// In the order the synthesized policy lists them.
const INDEXES = ['counted', ...[1, 2, 3, 4, 5].map((n) => `gsi${n}`)].map((name) =>
  arnOf('dynamodb', `table/data-access-service-dev-records/index/${name}`),
);
const SECRETS = [
  arnOf('secretsmanager', 'secret:data-access-service/dev/apps/app-demo-??????'),
  arnOf('secretsmanager', 'secret:data-access-service/dev/apps/app-reports-??????'),
  arnOf('secretsmanager', 'secret:data-access-service/dev/default-??????'),
];
const QUERY_STATEMENT = { Effect: 'Allow', Action: 'dynamodb:Query', Resource: [RECORDS, ...INDEXES] };
// Statements on the same resource are merged (feature flag @aws-cdk/aws-iam:minimizePolicies).
const READ_ITEMS_STATEMENT = {
  Effect: 'Allow',
  Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'],
  Resource: RECORDS,
};
const READ_WRITE_ITEMS_STATEMENT = {
  Effect: 'Allow',
  Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  Resource: RECORDS,
};
const SHARED_STATEMENTS = [
  { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: arnOf('dynamodb', 'table/data-access-service-dev-catalog') },
  {
    Effect: 'Allow',
    Action: 'dynamodb:UpdateItem',
    Resource: arnOf('dynamodb', 'table/data-access-service-dev-quota'),
  },
  { Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: SECRETS },
];

describe('one function per operation', () => {
  it("deploys eleven operation functions, the catalog deployer, the provider framework, the change log's three functions and the index jobs", () => {
    template.resourceCountIs('AWS::Lambda::Function', 17);
  });

  it.each(OPERATIONS)('%s runs on Node.js 22, arm64, with tracing and a JSON log format', (operation) => {
    expect(functionOf(operation).Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      TracingConfig: { Mode: 'Active' },
      LoggingConfig: { LogFormat: 'JSON' },
    });
  });

  it.each([
    ['get-list', 1024, 15],
    ['get-one', 1024, 10],
    ['create', 1024, 20],
    ['batch-create', 1024, 25],
    ['update', 1024, 10],
    ['execute-sql', 3072, 28],
    ['aggregate', 3072, 28],
    ['indexes', 512, 10],
    ['login-user-info', 512, 10],
    ['bff-endpoint', 512, 10],
  ] as const)('%s has %i MB and a %i s timeout, under API Gateway’s 29 s', (operation, memory, timeout) => {
    expect(functionOf(operation).Properties).toMatchObject({ MemorySize: memory, Timeout: timeout });
  });

  it.each(OPERATIONS)('%s reads its tables and secrets from the environment the runtime expects', (operation) => {
    expect(functionOf(operation).Properties.Environment.Variables).toEqual({
      RECORDS_TABLE: 'data-access-service-dev-records',
      CATALOG_TABLE: 'data-access-service-dev-catalog',
      QUOTA_TABLE: 'data-access-service-dev-quota',
      KEY_STORE: 'secrets-manager',
      SECRET_PREFIX: 'data-access-service/dev',
      DEFAULT_SECRET_ID: 'data-access-service/dev/default',
      METRIC_NAMESPACE: 'DataAccessService/dev',
      STAGE: 'dev',
      NODE_OPTIONS: '--enable-source-maps',
    });
  });

  it.each(OPERATIONS)('%s logs to its own log group, kept two weeks outside production', (operation) => {
    const logGroupId = logicalIdOf(template, 'AWS::Logs::LogGroup', `/Op-${operation}/Logs/`);
    expect(functionOf(operation).Properties.LoggingConfig.LogGroup).toEqual({ Ref: logGroupId });
    template.hasResource('AWS::Logs::LogGroup', {
      Properties: { RetentionInDays: 14 },
      DeletionPolicy: 'Delete',
    });
  });
});

describe('least privilege', () => {
  it.each([
    'get-one',
    'execute-sql',
    'aggregate',
  ] as const)('%s may read records, read the catalog, update its quota item and read the secrets — and write nothing else', (operation) => {
    expect(dataStatementsOf(operation)).toEqual([QUERY_STATEMENT, READ_ITEMS_STATEMENT, ...SHARED_STATEMENTS]);
  });

  it('get-list may also keep dataset bookkeeping items (meta# partitions: checkpoints, claims, count pages), never a record', () => {
    expect(dataStatementsOf('get-list')).toEqual([
      QUERY_STATEMENT,
      READ_ITEMS_STATEMENT,
      {
        Effect: 'Allow',
        Action: ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
        Resource: RECORDS,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['meta#*'] } },
      },
      ...SHARED_STATEMENTS,
    ]);
  });

  it.each([
    'create',
    'update',
  ] as const)('%s may additionally put and update records, and delete only the change items it claimed (meta#)', (operation) => {
    expect(dataStatementsOf(operation)).toEqual([
      QUERY_STATEMENT,
      READ_WRITE_ITEMS_STATEMENT,
      {
        Effect: 'Allow',
        Action: 'dynamodb:DeleteItem',
        Resource: RECORDS,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['meta#*'] } },
      },
      ...SHARED_STATEMENTS,
    ]);
  });

  it('batch-create may additionally write records in batches (BatchWriteItem), and delete none', () => {
    expect(dataStatementsOf('batch-create')).toEqual([
      QUERY_STATEMENT,
      {
        Effect: 'Allow',
        Action: [
          'dynamodb:BatchGetItem',
          'dynamodb:BatchWriteItem',
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
        ],
        Resource: RECORDS,
      },
      ...SHARED_STATEMENTS,
    ]);
  });

  it.each([
    'login-user-info',
    'bff-endpoint',
  ] as const)('%s (client-key mode only) reads the catalog and updates its quota item — no record, no secret', (operation) => {
    expect(dataStatementsOf(operation)).toEqual(SHARED_STATEMENTS.slice(0, -1));
    expect(JSON.stringify(dataStatementsOf(operation))).not.toContain('secretsmanager');
  });

  it.each([
    'get-one',
    'execute-sql',
    'aggregate',
  ] as const)('%s has no write action on the records table', (operation) => {
    const text = JSON.stringify(dataStatementsOf(operation));
    for (const action of ['PutItem', 'DeleteItem', 'BatchWriteItem', 'dynamodb:*']) expect(text).not.toContain(action);
  });

  it.each(OPERATIONS)('%s writes logs to its own log group only and X-Ray traces', (operation) => {
    const roleId = logicalIdOf(template, 'AWS::IAM::Role', `/Op-${operation}/Role/`);
    const logGroupId = logicalIdOf(template, 'AWS::Logs::LogGroup', `/Op-${operation}/Logs/`);
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: roleId }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Effect: 'Allow',
            Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
            Resource: { 'Fn::GetAtt': [logGroupId, 'Arn'] },
          },
          { Effect: 'Allow', Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], Resource: '*' },
        ]),
      },
    });
  });

  it.each(OPERATIONS)('%s has a role of its own with no managed policy', (operation) => {
    const roleId = logicalIdOf(template, 'AWS::IAM::Role', `/Op-${operation}/Role/`);
    expect(functionOf(operation).Properties.Role).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
    expect(template.toJSON().Resources[roleId].Properties.ManagedPolicyArns).toBeUndefined();
  });
});

describe('bundles', () => {
  const assetDir = (operation: Operation): string => {
    const code = functionOf(operation).Metadata['aws:asset:path'];
    return join(service.app.outdir, code);
  };

  it.each(OPERATIONS)('%s ships a minified CommonJS bundle with its source map', (operation) => {
    expect(existsSync(join(assetDir(operation), 'index.js'))).toBe(true);
    expect(existsSync(join(assetDir(operation), 'index.js.map'))).toBe(true);
  });

  it('copies the SQL engine’s WebAssembly next to the bundles that run SQL only: execute-sql and aggregate', () => {
    const beside = OPERATIONS.filter((operation) => existsSync(join(assetDir(operation), 'sql-wasm.wasm')));
    // The hooked get-one runs custom SQL through its hook's context.client.sql.
    expect(beside).toEqual(['get-one', 'execute-sql', 'aggregate']);
  });

  it('puts custom SQL’s dialect beside the bundles that run queries only: execute-sql, aggregate and the hooked get-one', () => {
    const beside = OPERATIONS.filter((operation) => existsSync(join(assetDir(operation), 'sql-dialect.js')));
    expect(beside).toEqual(['get-one', 'execute-sql', 'aggregate']);
  });

  it('puts the hook sandbox’s worker and WebAssembly beside the hooked get-one bundle only', () => {
    for (const operation of OPERATIONS) {
      const hooked = operation === 'get-one';
      expect([operation, existsSync(join(assetDir(operation), 'hook-sandbox-worker.js'))]).toEqual([operation, hooked]);
      expect([operation, existsSync(join(assetDir(operation), 'emscripten-module.wasm'))]).toEqual([operation, hooked]);
    }
  });

  it.each(OPERATIONS)('%s carries none of the engine’s glue in its own bundle', (operation) => {
    // QTS_NewRuntime: a name of the engine's foreign-function interface, present wherever its glue is.
    expect(readFileSync(join(assetDir(operation), 'index.js'), 'utf8')).not.toContain('QTS_NewRuntime');
  });

  it('the worker file beside the bundle runs a function on its own (no node_modules needed)', async () => {
    const dir = assetDir('get-one');
    const host = new SandboxHost({
      assets: {
        workerFile: join(dir, 'hook-sandbox-worker.js'),
        fromSource: false,
      },
    });
    try {
      const pass = 'export default async function pass(order, context) { return { ...order, app: context.appCode }; }';
      const result = await host.run(
        { name: 'pass', source: pass, timeoutMs: 200, memoryMb: 32 },
        { params: { id: 'o-1' }, context: { appCode: 'app-demo' }, read: async () => null, maxReads: 10 },
      );
      expect(result).toEqual({ id: 'o-1', app: 'app-demo' });
    } finally {
      await host.close();
    }
  });
});
