/**
 * What each operation's bundle is made of, from esbuild's metafile of the bundle `cdk synth` makes (the same
 * options, the same bytes): custom SQL's dialect is loaded from a file of its own by the code that runs a query, so
 * no bundle carries it, every bundle stays within the cold-start budget (docs/performance.md, "Cold start"), and
 * only the functions that run SQL on Aurora carry its client (all but execute-sql load it on a first statement; the
 * operations hooks run in load custom SQL itself on a hook's first query).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HOOK_OPERATIONS } from '../../../../shared/catalog/schema';
import { operationRoutes } from '../../../../shared/contract/client-routes';
import { type BuiltBundle, buildFunctionBundle, importChain, startupBytes } from '../../../support/function-bundles';
import { REPO_ROOT } from '../../../support/paths';

/**
 * The budget the cold-start bench measures against: 330 KB of 1,024 bytes of what runs when a bundle starts,
 * without the AWS SDK and without the code only a first use loads (the Aurora engine, and in the operations hooks
 * run in custom SQL itself, below), which esbuild leaves unrun until then (320 KB until
 * related fields on get-list came, which hooks' `context.client` brings into every bundle; 300 KB until the
 * quota's leases, batch update, change compaction and custom SQL on MySQL came; docs/performance.md, "Cold start").
 */
const BUDGET_BYTES = 330 * 1024;

const OPERATIONS = operationRoutes().map((route) => route.functionFile);
/** The operations a hook may run in: their hooks' `context.client.sql` runs custom SQL, on Aurora where it runs. */
const HOOKED: string[] = [...HOOK_OPERATIONS];
const SQL_RUNNERS = ['execute-sql', 'aggregate', ...HOOKED];
const bundles = new Map<string, BuiltBundle>();

beforeAll(async () => {
  for (const operation of OPERATIONS) {
    bundles.set(operation, await buildFunctionBundle(path.join(REPO_ROOT, 'functions', `${operation}.ts`)));
  }
}, 120_000);

const bundleOf = (operation: string): BuiltBundle => bundles.get(operation) as BuiltBundle;

describe('operation bundles', () => {
  it.each(OPERATIONS)('%s carries none of the SQL dialect, at most its loader', (operation) => {
    const { metafile } = bundleOf(operation);
    const dialect = Object.keys(metafile.inputs).filter((input) => input.startsWith('shared/sql-dialect/'));
    // Each module of the dialect that came in, with the imports that brought it.
    const brought = dialect
      .filter((input) => input !== 'shared/sql-dialect/dialect-loader.ts')
      .map((input) => importChain(metafile, input).join(' -> '));
    expect(brought).toEqual([]);
    // The loader only where custom SQL runs (a hook's query included): no other bundle reaches custom SQL at all.
    expect(dialect).toEqual(SQL_RUNNERS.includes(operation) ? ['shared/sql-dialect/dialect-loader.ts'] : []);
  });

  it.each(OPERATIONS)('%s is within the 330 KB budget of what runs at start', (operation) => {
    expect(startupBytes(bundleOf(operation))).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it.each(OPERATIONS)('%s carries the RDS Data API client only if it runs SQL on Aurora', (operation) => {
    const { metafile } = bundleOf(operation);
    const importers = Object.entries(metafile.inputs)
      .filter(([, input]) => input.imports.some((imported) => imported.path === '@aws-sdk/client-rds-data'))
      .map(([name]) => name)
      .sort();
    const expected = [
      'shared/aws/rds-data.ts',
      'shared/mirror/data-api-calls.ts',
      'shared/mirror/data-api-query-engine.ts',
      'shared/mirror/data-api-session.ts',
    ];
    expect(importers).toEqual(SQL_RUNNERS.includes(operation) ? expected : []);
  });

  it.each(HOOKED)('%s runs custom SQL for a hook, loaded only by a first query', (operation) => {
    const { metafile } = bundleOf(operation);
    const [output] = Object.values(metafile.outputs).filter((out) => out.entryPoint !== undefined);
    // Carried (a hook's `context.client.sql` runs it in this function), and reached only through `import()`.
    expect(output?.inputs).toHaveProperty(['shared/operations/execute-sql.ts']);
    expect(output?.inputs).toHaveProperty(['shared/composition/deployed-mirror-engine.ts']);
    const lazily = Object.entries(metafile.inputs)
      .flatMap(([input, { imports }]) => imports.map((imported) => ({ input, ...imported })))
      .filter((imported) =>
        ['shared/operations/execute-sql.ts', 'shared/composition/deployed-mirror-engine.ts'].includes(imported.path),
      )
      .map(({ input, path: target, kind }) => `${input} -> ${target} (${kind})`)
      .sort();
    expect(lazily).toEqual([
      'shared/composition/hooked-handler.ts -> shared/operations/execute-sql.ts (dynamic-import)',
      'shared/composition/lazy-mirror-engine.ts -> shared/composition/deployed-mirror-engine.ts (dynamic-import)',
    ]);
  });

  it.each([
    ...HOOKED,
    'aggregate',
  ])('%s loads the RDS Data API client only on a statement, not at start', (operation) => {
    // The bundle run by a plain node process (in the repository, so that it finds the externalized @aws-sdk/*
    // as Lambda's runtime provides them), with the deployment's SQL environment, every module it loads recorded.
    const file = path.join(REPO_ROOT, 'cdk.out', `lazy-${operation}-${process.pid}.js`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, bundleOf(operation).code);
    try {
      const script = [
        "const Module = require('node:module');",
        'const loaded = new Set();',
        'const load = Module._load;',
        'Module._load = function (request, ...rest) { loaded.add(request); return load.call(this, request, ...rest); };',
        `const { handler } = require(${JSON.stringify(file)});`,
        "if (typeof handler !== 'function') throw new Error('no handler');",
        "process.stdout.write(JSON.stringify([...loaded].filter((name) => name.startsWith('@aws-sdk/')).sort()));",
      ].join('\n');
      const env = {
        ...process.env,
        SQL_ENGINE: 'aurora',
        SQL_CLUSTER_ARN: 'arn:aws:rds:eu-west-1:123456789012:cluster:das-dev-sql',
        SQL_DATABASE: 'mirror',
        SQL_QUERY_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:q',
        SQL_WRITER_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:w',
      };
      const loaded = JSON.parse(execFileSync(process.execPath, ['-e', script], { env, encoding: 'utf8' }));
      // What every data operation loads at start (so the record of loads is complete), and not the Data API.
      expect(loaded).toContain('@aws-sdk/client-dynamodb');
      expect(loaded).not.toContain('@aws-sdk/client-rds-data');
    } finally {
      rmSync(file, { force: true });
    }
  });
});
