import path from 'node:path';
import { locateSqlAssets, SQL_BUNDLE_ASSETS, sqlBundleCopyCommands } from '../../../../shared/sql/bundle-assets';

const root = path.resolve(__dirname, '../../../..');

describe('SQL engine assets', () => {
  it('lists the worker, the sql.js loader, its WASM binary and the MySQL functions', () => {
    expect(SQL_BUNDLE_ASSETS).toEqual(['sqljs-worker.js', 'sql-wasm.js', 'sql-wasm.wasm', 'sqlite-functions.js']);
  });

  it('finds them in the source tree and the sql.js package when nothing sits beside the code', () => {
    expect(locateSqlAssets()).toEqual({
      workerPath: path.join(root, 'shared/sql/sqljs-worker.js'),
      sqlJsPath: path.join(root, 'node_modules/sql.js/dist/sql-wasm.js'),
      wasmPath: path.join(root, 'node_modules/sql.js/dist/sql-wasm.wasm'),
      functionsPath: path.join(root, 'shared/sql-dialect/sqlite-functions.js'),
    });
  });

  it('gives the copy commands for a bundle directory', () => {
    expect(sqlBundleCopyCommands('/asset-output')).toEqual([
      `cp '${path.join(root, 'shared/sql/sqljs-worker.js')}' '/asset-output/sqljs-worker.js'`,
      `cp '${path.join(root, 'node_modules/sql.js/dist/sql-wasm.js')}' '/asset-output/sql-wasm.js'`,
      `cp '${path.join(root, 'node_modules/sql.js/dist/sql-wasm.wasm')}' '/asset-output/sql-wasm.wasm'`,
      `cp '${path.join(root, 'shared/sql-dialect/sqlite-functions.js')}' '/asset-output/sqlite-functions.js'`,
    ]);
  });
});
