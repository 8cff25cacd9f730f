/** The per-stage dashboard: its sections in order and what each widget draws (lib/service-dashboard.ts). */
import type { Template } from 'aws-cdk-lib/assertions';
import { MAX_HOOK_FUNCTION_LINES } from '../../../lib/service-dashboard';
import type { CatalogConfig } from '../../../shared/catalog/schema';
import { parseConfig } from '../../../shared/catalog-store/load-config';
import { type BuiltService, buildService, logicalIdOf, TEST_CONFIG } from '../../support/service-fixture';

let service: BuiltService;
let template: Template;
/** The dashboard body with CloudFormation's Fn::Join flattened and tokens replaced by their logical ids. */
// biome-ignore lint/suspicious/noExplicitAny: the dashboard body is untyped JSON that the assertions read
let body: { widgets: Array<{ type: string; properties: Record<string, any> }> };

function flatten(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(flatten).join('');
  const object = value as Record<string, unknown>;
  if ('Fn::Join' in object) {
    const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
    return parts.map(flatten).join(separator);
  }
  if ('Ref' in object) return `<${object.Ref}>`;
  if ('Fn::GetAtt' in object) return `<${(object['Fn::GetAtt'] as string[]).join('.')}>`;
  throw new Error(`cannot flatten ${JSON.stringify(value)}`);
}

/** The dashboard body of a template. */
// biome-ignore lint/suspicious/noExplicitAny: the dashboard body is untyped JSON that the assertions read
function dashboardBody(of: Template): { widgets: Array<{ type: string; properties: Record<string, any> }> } {
  const dashboard = Object.values(of.findResources('AWS::CloudWatch::Dashboard'))[0];
  return JSON.parse(flatten(dashboard?.Properties.DashboardBody));
}

beforeAll(() => {
  service = buildService();
  template = service.statelessTemplate;
  body = dashboardBody(template);
});

const titles = () => body.widgets.map((w) => w.properties.title ?? w.properties.markdown);
const widget = (title: string) => {
  const found = body.widgets.find((w) => w.properties.title === title);
  if (!found) throw new Error(`no widget '${title}'`);
  return found.properties;
};
/** Metric rows of a graph without rendering options. */
const metricsOf = (title: string): unknown[][] =>
  widget(title).metrics.map((row: unknown[]) => row.filter((cell) => typeof cell !== 'object' || cell === null));

describe('dashboard', () => {
  it('is named after the stage', () => {
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'data-access-service-dev' });
  });

  it('has the operation, API, DynamoDB, request-log and hook sections, in that order', () => {
    expect(titles()).toEqual([
      'Alarms',
      '## Operations (Lambda)',
      'Invocations by operation',
      'Errors by operation',
      'Throttles by operation',
      'Duration p50 by operation (ms)',
      'Duration p99 by operation (ms)',
      '## API Gateway',
      'API requests, 4xx and 5xx',
      'API 5xx rate (%)',
      'API latency (ms)',
      '## DynamoDB',
      'Consumed read capacity units by table',
      'Consumed write capacity units by table',
      'Throttle events by table',
      '## Requests (request log, embedded metric format)',
      'Requests by operation',
      'Failed requests by operation',
      'Request duration p99 by operation (ms)',
      'Errors by code and operation',
      'Authentication failures by code',
      'Quota rejections (4001) by operation',
      'Read units by operation',
      'Write units by operation',
      'SQL execution time (ms)',
      'Requests by mode (signed, client key)',
      'Failed requests by mode',
      'Request duration p99 by mode (ms)',
      '## Change log and webhooks',
      'Webhook deliveries and failures',
      'Parked events',
      'Oldest undelivered event (s)',
      'Change log lag: stream iterator age (ms)',
      'Per-value totals: records folded beside the writes',
      'Folds waiting on their queue',
      'Folds given up on',
      '## Index builds (records done, rate, errors; `das indexes` shows each index)',
      'Index jobs: records done and keys written',
      'Index jobs: records per second',
      'Index jobs: errors, throttles, failed runs',
      // TEST_CONFIG hooks get-one with one function.
      '## Hooks (backend functions, by function)',
      'Hook duration p50 by function (ms)',
      'Hook duration p99 by function (ms)',
      'Hook failures by function (3001)',
    ]);
  });

  it('draws one invocation line per operation function', () => {
    const rows = widget('Invocations by operation').metrics as unknown[][];
    expect(rows.map((row) => row[0])).toEqual(Array(11).fill('AWS/Lambda'));
    expect(rows.map((row) => (row.at(-1) as { label: string }).label)).toEqual([
      'get-list',
      'get-one',
      'create',
      'batch-create',
      'update',
      'execute-sql',
      'aggregate',
      'changes',
      'indexes',
      'login-user-info',
      'bff-endpoint',
    ]);
  });

  it('draws p50 and p99 durations', () => {
    expect(widget('Duration p50 by operation (ms)').metrics[0].at(-1)).toMatchObject({ stat: 'p50' });
    expect(widget('Duration p99 by operation (ms)').metrics[0].at(-1)).toMatchObject({ stat: 'p99' });
  });

  it('draws the API stage’s requests, 4xx and 5xx', () => {
    // The Stage dimension is a Ref to the stage resource, which CloudFormation resolves to its name ('dev').
    const stage = `<${logicalIdOf(template, 'AWS::ApiGateway::Stage', '/Api/Api/DeploymentStage.dev/')}>`;
    expect(metricsOf('API requests, 4xx and 5xx')).toEqual([
      ['AWS/ApiGateway', 'Count', 'ApiName', 'data-access-service-dev', 'Stage', stage],
      ['AWS/ApiGateway', '4XXError', 'ApiName', 'data-access-service-dev', 'Stage', stage],
      ['AWS/ApiGateway', '5XXError', 'ApiName', 'data-access-service-dev', 'Stage', stage],
    ]);
  });

  it('draws consumed capacity and throttles of each table', () => {
    expect(metricsOf('Consumed read capacity units by table')).toEqual([
      ['AWS/DynamoDB', 'ConsumedReadCapacityUnits', 'TableName', 'data-access-service-dev-records'],
      ['AWS/DynamoDB', 'ConsumedReadCapacityUnits', 'TableName', 'data-access-service-dev-catalog'],
      ['AWS/DynamoDB', 'ConsumedReadCapacityUnits', 'TableName', 'data-access-service-dev-quota'],
    ]);
    expect(metricsOf('Throttle events by table')).toHaveLength(6);
  });

  it('reads the request log’s metrics from the stage’s namespace', () => {
    expect(metricsOf('Requests by operation')).toEqual([
      ['DataAccessService/dev', 'requests', 'operation', 'get-list'],
      ['DataAccessService/dev', 'requests', 'operation', 'get-one'],
      ['DataAccessService/dev', 'requests', 'operation', 'create'],
      ['DataAccessService/dev', 'requests', 'operation', 'batch-create'],
      ['DataAccessService/dev', 'requests', 'operation', 'update'],
      ['DataAccessService/dev', 'requests', 'operation', 'execute-sql'],
      ['DataAccessService/dev', 'requests', 'operation', 'aggregate'],
      ['DataAccessService/dev', 'requests', 'operation', 'changes'],
      ['DataAccessService/dev', 'requests', 'operation', 'indexes'],
      ['DataAccessService/dev', 'requests', 'operation', 'login-user-info'],
      ['DataAccessService/dev', 'requests', 'operation', 'bff-endpoint'],
    ]);
    expect(metricsOf('Read units by operation')[0]).toEqual([
      'DataAccessService/dev',
      'readUnits',
      'operation',
      'get-list',
    ]);
    expect(metricsOf('Write units by operation')[0]).toEqual([
      'DataAccessService/dev',
      'writeUnits',
      'operation',
      'get-list',
    ]);
    expect(metricsOf('SQL execution time (ms)')).toEqual([
      ['DataAccessService/dev', 'sqlDurationMs', 'operation', 'execute-sql'],
      ['DataAccessService/dev', 'sqlDurationMs', 'operation', 'execute-sql'],
    ]);
  });

  it('shows index builds: records done, their rate, and errors, throttles and failed runs of the state machine', () => {
    expect(metricsOf('Index jobs: records done and keys written').map((row) => row.slice(0, 2))).toEqual([
      ['DataAccessService/dev', 'indexBuildRecords'],
      ['DataAccessService/dev', 'indexBuildWrites'],
      ['DataAccessService/dev', 'indexBuildPending'],
    ]);
    const failed = metricsOf('Index jobs: errors, throttles, failed runs');
    expect(failed.slice(0, 3).map((row) => row.slice(0, 2))).toEqual([
      ['DataAccessService/dev', 'indexBuildErrors'],
      ['DataAccessService/dev', 'indexBuildThrottles'],
      ['DataAccessService/dev', 'indexBuildConflicts'],
    ]);
    expect(JSON.stringify(failed.slice(3))).toContain('AWS/States');
  });

  it('shows signed and client-key traffic apart: requests, failures and p99 duration by mode', () => {
    expect(metricsOf('Requests by mode (signed, client key)')).toEqual([
      ['DataAccessService/dev', 'requests', 'mode', 'signed'],
      ['DataAccessService/dev', 'requests', 'mode', 'client'],
    ]);
    expect(metricsOf('Failed requests by mode')).toEqual([
      ['DataAccessService/dev', 'errors', 'mode', 'signed'],
      ['DataAccessService/dev', 'errors', 'mode', 'client'],
    ]);
    expect(widget('Request duration p99 by mode (ms)').metrics[1].at(-1)).toMatchObject({
      stat: 'p99',
      label: 'client',
    });
  });

  it('sums authentication failures by code (1002, 1003, 1004) over the operations', () => {
    const rows = widget('Authentication failures by code').metrics as unknown[][];
    const expressions = rows.filter((row) => (row[0] as { expression?: string }).expression);
    expect(expressions.map((row) => row[0])).toEqual([
      expect.objectContaining({
        label: '1002',
        expression:
          'auth1002_0 + auth1002_1 + auth1002_2 + auth1002_3 + auth1002_4 + auth1002_5 + auth1002_6 + ' +
          'auth1002_7 + auth1002_8 + auth1002_9 + auth1002_10',
      }),
      expect.objectContaining({
        label: '1003',
        expression:
          'auth1003_0 + auth1003_1 + auth1003_2 + auth1003_3 + auth1003_4 + auth1003_5 + auth1003_6 + ' +
          'auth1003_7 + auth1003_8 + auth1003_9 + auth1003_10',
      }),
      expect.objectContaining({
        label: '1004',
        expression:
          'auth1004_0 + auth1004_1 + auth1004_2 + auth1004_3 + auth1004_4 + auth1004_5 + auth1004_6 + ' +
          'auth1004_7 + auth1004_8 + auth1004_9 + auth1004_10',
      }),
    ]);
    const sources = rows.filter((row) => row[0] === 'DataAccessService/dev');
    // Three codes, eleven operation functions.
    expect(sources).toHaveLength(33);
    expect(sources).toContainEqual([
      'DataAccessService/dev',
      'errors',
      'code',
      '1003',
      'operation',
      'get-one',
      { id: 'auth1003_1', label: '', stat: 'Sum', visible: false },
    ]);
  });

  it('shows quota rejections (4001) per operation and every error code through a search', () => {
    expect(metricsOf('Quota rejections (4001) by operation')[5]).toEqual([
      'DataAccessService/dev',
      'errors',
      'code',
      '4001',
      'operation',
      'execute-sql',
    ]);
    expect(widget('Errors by code and operation').metrics[0][0]).toMatchObject({
      expression: `SEARCH('{"DataAccessService/dev",code,operation} MetricName="errors"', 'Sum', 300)`,
    });
  });
});

describe('hook metrics on the dashboard', () => {
  /** TEST_CONFIG with `count` functions, each hooked after get-one of orders (and the first once more). */
  function hookedConfig(count: number): CatalogConfig {
    const names = Array.from({ length: count }, (_, i) => (i === 0 ? 'mask-customer' : `fn-${i}`));
    return parseConfig({
      ...TEST_CONFIG,
      functions: names.map((name) => ({
        appCode: 'app-demo',
        name,
        source: 'export default async function f(data) { return data; }',
      })),
      hooks: [
        ...names.map((name) => ({ datasetCode: 'orders', operation: 'get-one', node: 'after', function: name })),
        { datasetCode: 'orders', operation: 'get-list', node: 'after', function: 'mask-customer' },
      ],
    });
  }
  const widgetOf = (of: ReturnType<typeof dashboardBody>, title: string) => {
    const found = of.widgets.find((w) => w.properties.title === title);
    if (!found) throw new Error(`no widget '${title}'`);
    return found.properties;
  };

  it('has no hook section when the configuration hooks nothing', () => {
    const unhooked = dashboardBody(
      buildService({ config: parseConfig({ ...TEST_CONFIG, functions: [], hooks: [] }) }).statelessTemplate,
    );
    const unhookedTitles = unhooked.widgets.map((w) => w.properties.title ?? w.properties.markdown);
    expect(unhookedTitles.filter((title) => /^(## )?Hook/.test(title))).toEqual([]);
    expect(unhookedTitles.at(-1)).toBe('Index jobs: errors, throttles, failed runs');
  });

  it('draws duration p50/p99 and failures of each hooked function, by its configured name', () => {
    const hooked = dashboardBody(buildService({ config: hookedConfig(2) }).statelessTemplate);
    expect(hooked.widgets.slice(-4).map((w) => w.properties.title ?? w.properties.markdown)).toEqual([
      '## Hooks (backend functions, by function)',
      'Hook duration p50 by function (ms)',
      'Hook duration p99 by function (ms)',
      'Hook failures by function (3001)',
    ]);
    expect(widgetOf(hooked, 'Hook duration p99 by function (ms)').metrics).toEqual([
      [
        'DataAccessService/dev',
        'hookDurationMs',
        'hookFunction',
        'mask-customer',
        { label: 'mask-customer', stat: 'p99' },
      ],
      ['DataAccessService/dev', 'hookDurationMs', 'hookFunction', 'fn-1', { label: 'fn-1', stat: 'p99' }],
    ]);
    expect(widgetOf(hooked, 'Hook duration p50 by function (ms)').metrics[0]).toEqual([
      'DataAccessService/dev',
      'hookDurationMs',
      'hookFunction',
      'mask-customer',
      { label: 'mask-customer', stat: 'p50' },
    ]);
    expect(widgetOf(hooked, 'Hook failures by function (3001)').metrics).toEqual([
      [
        'DataAccessService/dev',
        'hookFailures',
        'hookFunction',
        'mask-customer',
        { label: 'mask-customer', stat: 'Sum' },
      ],
      ['DataAccessService/dev', 'hookFailures', 'hookFunction', 'fn-1', { label: 'fn-1', stat: 'Sum' }],
    ]);
  });

  it('searches the namespace instead of drawing a line each past the limit of lines per graph', () => {
    const many = dashboardBody(buildService({ config: hookedConfig(MAX_HOOK_FUNCTION_LINES + 1) }).statelessTemplate);
    expect(widgetOf(many, 'Hook failures by function (3001)').metrics).toEqual([
      [
        {
          expression: 'SEARCH(\'{"DataAccessService/dev",hookFunction} MetricName="hookFailures"\', \'Sum\', 300)',
        },
      ],
    ]);
  });
});

describe('provisioned concurrency on the dashboard', () => {
  it('shows nothing of it when no operation has provisioned concurrency', () => {
    expect(titles().filter((title) => /provisioned/i.test(title))).toEqual([]);
  });

  it('draws how much of it each provisioned operation uses and the invocations beyond it, on its alias', () => {
    const provisioned = buildService({ context: { provisionedConcurrency: 'get-one=2' } }).statelessTemplate;
    const of = dashboardBody(provisioned);
    const fn = logicalIdOf(provisioned, 'AWS::Lambda::Function', '/Op-get-one/Function/');
    const byTitle = (title: string) => of.widgets.find((w) => w.properties.title === title)?.properties;
    expect(byTitle('Provisioned concurrency in use (max, 1 = all)')?.metrics).toEqual([
      [
        'AWS/Lambda',
        'ProvisionedConcurrencyUtilization',
        'FunctionName',
        `<${fn}>`,
        'Resource',
        `<${fn}>:live`,
        { label: 'get-one', stat: 'Maximum' },
      ],
    ]);
    expect(byTitle('Invocations beyond provisioned concurrency')?.metrics).toEqual([
      [
        'AWS/Lambda',
        'ProvisionedConcurrencySpilloverInvocations',
        'FunctionName',
        `<${fn}>`,
        'Resource',
        `<${fn}>:live`,
        { label: 'get-one', stat: 'Sum' },
      ],
    ]);
  });
});
