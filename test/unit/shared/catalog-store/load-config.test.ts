/** Configuration validation (docs/interface.md §9): each documented error is refused with its path. */
import path from 'node:path';
import { ConfigError, loadConfigFile, parseConfig } from '../../../../shared/catalog-store/load-config';

/** Raw configuration JSON, mutated freely by the cases below. */
// biome-ignore lint/suspicious/noExplicitAny: the cases write invalid shapes on purpose
type Loose = any;

function baseConfig(): Loose {
  return {
    applications: [
      {
        appCode: 'app-a',
        accessKey: 'ak-aaaaaaaa',
        grants: [{ datasetCode: 'orders', operations: ['read'] }],
      },
    ],
    datasets: [
      {
        appCode: 'app-a',
        datasetCode: 'orders',
        fields: [
          { name: 'customer', type: 'string', required: true },
          { name: 'status', type: 'enum', options: ['new', 'paid'] },
        ],
      },
    ],
    queries: [
      {
        appCode: 'app-a',
        sqlCode: 'by-status',
        sql: 'SELECT * FROM orders WHERE status = #{status}',
        params: { status: { type: 'string' } },
      },
    ],
  };
}

function problemsOf(mutate: (config: Loose) => void) {
  const config = baseConfig();
  mutate(config);
  try {
    parseConfig(config);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('configuration validation', () => {
  it('accepts the base configuration and fills defaults in the catalog', () => {
    expect(parseConfig(baseConfig()).applications[0]?.appCode).toBe('app-a');
  });

  it('accepts the shipped demo configuration', () => {
    const config = loadConfigFile(path.join(__dirname, '..', '..', '..', '..', 'config', 'demo.json'));
    expect(config.datasets.map((d) => d.datasetCode)).toEqual(['customers', 'orders', 'products']);
  });

  it.each([
    [
      'an unknown field type',
      (c: Loose) => {
        c.datasets[0].fields[0].type = 'money';
      },
      'datasets[0].fields[0].type',
    ],
    [
      'an enum without options',
      (c: Loose) => {
        delete c.datasets[0].fields[1].options;
      },
      'datasets[0].fields[1].options',
    ],
    [
      'a grant to an unknown dataset',
      (c: Loose) => {
        c.applications[0].grants[0].datasetCode = 'invoices';
      },
      'applications[0].grants[0].datasetCode',
    ],
    [
      'readFields naming an unknown field',
      (c: Loose) => {
        Object.assign(c.applications[0].grants[0], { readFields: ['customer', 'secret_margin'] });
      },
      'applications[0].grants[0].readFields[1]',
    ],
    [
      'writeFields naming an unknown field',
      (c: Loose) => {
        Object.assign(c.applications[0].grants[0], { writeFields: ['nope'] });
      },
      'applications[0].grants[0].writeFields[0]',
    ],
    [
      'a rowFilter on an unknown field',
      (c: Loose) => {
        Object.assign(c.applications[0].grants[0], { rowFilter: { region_in: ['EU'] } });
      },
      'applications[0].grants[0].rowFilter.region_in',
    ],
    [
      'a duplicate dataset code',
      (c: Loose) => {
        c.datasets.push({ ...c.datasets[0] });
      },
      'datasets[1].datasetCode',
    ],
    [
      'a duplicate application code',
      (c: Loose) => {
        c.applications.push({ ...c.applications[0] });
      },
      'applications[1].appCode',
    ],
    [
      '${} in a query',
      (c: Loose) => {
        c.queries[0].sql = 'SELECT * FROM orders WHERE status = ${status}';
      },
      'queries[0].sql',
    ],
    [
      'a placeholder without a declared parameter',
      (c: Loose) => {
        c.queries[0].sql = 'SELECT * FROM orders WHERE status = #{state}';
      },
      'queries[0].sql',
    ],
    [
      'a field named like a system field',
      (c: Loose) => {
        c.datasets[0].fields.push({ name: 'gmt_create', type: 'string', required: false });
      },
      'datasets[0].fields[2].name',
    ],
    [
      'a code outside the alphabet',
      (c: Loose) => {
        c.datasets[0].datasetCode = 'orders 2024';
      },
      'datasets[0].datasetCode',
    ],
    [
      'an unknown key',
      (c: Loose) => {
        Object.assign(c.datasets[0], { colour: 'blue' });
      },
      'datasets[0]',
    ],
  ])('refuses %s at its path', (_label, mutate, expectedPath) => {
    const problems = problemsOf(mutate);
    expect(problems.map((p) => p.path)).toContain(expectedPath);
  });

  it.each([
    [{ placed_start: true }, "placed_start: _start is not supported for the boolean field 'placed'"],
    [{ status: 'refunded' }, "status: field 'status' expects one of: new, paid"],
    [{ customer_in: [] }, 'customer_in: expects a non-empty array of values'],
  ])('refuses the row filter %j, which could never apply', (rowFilter, message) => {
    const problems = problemsOf((c: Loose) => {
      c.datasets[0].fields.push({ name: 'placed', type: 'boolean' });
      c.applications[0].grants[0].rowFilter = rowFilter;
    });
    expect(problems).toEqual([{ path: 'applications[0].grants[0].rowFilter', message }]);
  });

  it('accepts a row filter get-list could apply', () => {
    expect(
      problemsOf((c: Loose) => Object.assign(c.applications[0].grants[0], { rowFilter: { status_like: 'pa' } })),
    ).toEqual([]);
  });

  it('lists every problem at once, each with its path and message', () => {
    const problems = problemsOf((c: Loose) => {
      c.datasets[0].fields[0].type = 'money';
      delete c.datasets[0].fields[1].options;
      c.queries[0].sql = 'SELECT ${x}';
    });
    expect(problems).toEqual([
      { path: 'datasets[0].fields[0].type', message: expect.stringContaining('"string"') },
      { path: 'datasets[0].fields[1].options', message: 'an enum field needs options' },
      { path: 'queries[0].sql', message: '${...} splices text into SQL and is refused; use #{name} parameters' },
    ]);
  });

  it('reports a file that is not JSON, naming the file', () => {
    expect(() => loadConfigFile(path.join(__dirname, 'load-config.test.ts'))).toThrow(/is not valid JSON/);
  });
});
