/**
 * What each operation's bundle is made of, from esbuild's metafile of the bundle `cdk synth` makes (the same
 * options, the same bytes): custom SQL's dialect is loaded from a file of its own by the code that runs a query, so
 * no bundle carries it, and every bundle stays within the cold-start budget (docs/performance.md, "Cold start").
 */
import path from 'node:path';
import { operationRoutes } from '../../../../shared/contract/client-routes';
import { type BuiltBundle, buildFunctionBundle, importChain } from '../../../support/function-bundles';
import { REPO_ROOT } from '../../../support/paths';

/**
 * The budget the cold-start bench measures against: 330 KB of 1,024 bytes, without the AWS SDK (320 KB until
 * related fields on get-list came, which hooks' `context.client` brings into every bundle; 300 KB until the
 * quota's leases, batch update, change compaction and custom SQL on MySQL came; docs/performance.md, "Cold start").
 */
const BUDGET_BYTES = 330 * 1024;

const OPERATIONS = operationRoutes().map((route) => route.functionFile);
const bundles = new Map<string, BuiltBundle>();

beforeAll(async () => {
  for (const operation of OPERATIONS) {
    bundles.set(operation, await buildFunctionBundle(path.join(REPO_ROOT, 'functions', `${operation}.ts`)));
  }
}, 120_000);

const bundleOf = (operation: string): BuiltBundle => bundles.get(operation) as BuiltBundle;

describe('operation bundles', () => {
  it.each(OPERATIONS)('%s carries none of the SQL dialect, only its loader', (operation) => {
    const { metafile } = bundleOf(operation);
    const dialect = Object.keys(metafile.inputs).filter((input) => input.startsWith('shared/sql-dialect/'));
    // Each module of the dialect that came in, with the imports that brought it.
    const brought = dialect
      .filter((input) => input !== 'shared/sql-dialect/dialect-loader.ts')
      .map((input) => importChain(metafile, input).join(' -> '));
    expect(brought).toEqual([]);
    expect(dialect).toEqual(['shared/sql-dialect/dialect-loader.ts']);
  });

  it.each(OPERATIONS)('%s is within the 330 KB budget', (operation) => {
    expect(bundleOf(operation).code.byteLength).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it.each(OPERATIONS)('%s loads the RDS Data API client only if it is execute-sql', (operation) => {
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
    expect(importers).toEqual(operation === 'execute-sql' ? expected : []);
  });
});
