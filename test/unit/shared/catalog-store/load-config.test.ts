/** Configuration validation (docs/interface.md §9): each documented error is refused with its path. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

  it("refuses a user's row filter that could never apply, at that user's grant", () => {
    const problems = problemsOf((c: Loose) => {
      c.applications[0].users = [
        {
          userId: 'u-1',
          userName: 'User One',
          loginName: 'u1@example.com',
          grants: [{ datasetCode: 'orders', operations: ['read'], rowFilter: { status: 'refunded' } }],
          keyHashes: ['b51f462d27fadb3280ff6fff2767ceedc982d625a9765f71e69d6b854548bc9c'],
        },
      ];
    });
    expect(problems).toEqual([
      {
        path: 'applications[0].users[0].grants[0].rowFilter',
        message: "status: field 'status' expects one of: new, paid",
      },
    ]);
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

describe('backend functions and hooks (docs/interface.md §15)', () => {
  const fn = (source: string) => ({ appCode: 'app-a', name: 'mask', source });
  const hook = { datasetCode: 'orders', operation: 'get-one', node: 'after', function: 'mask' };

  it('accepts a function and its hook', () => {
    const config = baseConfig();
    config.functions = [fn('export default async function mask(data) { return data; }')];
    config.hooks = [hook];
    expect(parseConfig(config).hooks).toEqual([hook]);
  });

  it('refuses a syntax error, an unknown function, dataset and application, each with its path', () => {
    const problems = problemsOf((config) => {
      config.functions = [fn('export default async function mask(data) { return ( }')];
      config.hooks = [
        { ...hook, function: 'nope' },
        { ...hook, datasetCode: 'nothing' },
        { ...hook, appCode: 'app-z' },
      ];
    });
    expect(problems.map((p) => p.path)).toEqual([
      'hooks[0].function',
      'hooks[1].datasetCode',
      'hooks[2].appCode',
      'functions[0].source',
    ]);
    const syntax = problemsOf((config) => {
      config.functions = [fn('export default async function mask(data) { return ( }')];
    });
    expect(syntax).toEqual([{ path: 'functions[0].source', message: "Unexpected token '}'" }]);
  });

  it('lists a syntax error beside the other problems of the same file', () => {
    const problems = problemsOf((config) => {
      config.functions = [fn('export default async function mask(data) { return ( }')];
      config.hooks = [{ ...hook, datasetCode: 'nothing' }];
    });
    expect(problems).toEqual([
      { path: 'hooks[0].datasetCode', message: "unknown dataset 'nothing'" },
      { path: 'functions[0].source', message: "Unexpected token '}'" },
    ]);
  });

  it('refuses a function without a default export, and limits above the maximum', () => {
    const problems = problemsOf((config) => {
      config.functions = [
        fn('async function mask(data) { return data; }'),
        { ...fn('export default async function m(d) { return d; }'), name: 'big', timeoutMs: 2001, memoryMb: 129 },
      ];
    });
    expect(problems).toEqual([
      { path: 'functions[1].timeoutMs', message: 'Too big: expected number to be <=2000' },
      { path: 'functions[1].memoryMb', message: 'Too big: expected number to be <=128' },
      { path: 'functions[0].source', message: 'must have exactly one `export default` (the function)' },
    ]);
    const noExport = problemsOf((config) => {
      config.functions = [fn('async function mask(data) { return data; }')];
    });
    expect(noExport).toEqual([
      { path: 'functions[0].source', message: 'must have exactly one `export default` (the function)' },
    ]);
  });

  it('reads a function file beside the configuration and refuses one that cannot be read', () => {
    const fixtures = path.join(__dirname, '..', '..', '..', 'fixtures');
    const config = loadConfigFile(path.join(fixtures, 'hooks-config.json'));
    expect(config.functions?.[0]?.source).toContain('export default async function maskEmail(data, context)');
    const dir = mkdtempSync(path.join(tmpdir(), 'das-functions-'));
    const file = path.join(dir, 'config.json');
    const broken = baseConfig();
    broken.functions = [{ appCode: 'app-a', name: 'gone', file: 'gone.js' }];
    writeFileSync(file, JSON.stringify(broken));
    expect(() => loadConfigFile(file)).toThrow(/functions\[0\]\.file: cannot be read: ENOENT/);
  });
});
