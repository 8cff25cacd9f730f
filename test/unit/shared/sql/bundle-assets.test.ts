import path from 'node:path';
import { locateSqlAssets, SQL_BUNDLE_ASSETS, sqlBundleCopyCommands } from '../../../../shared/sql/bundle-assets';

const root = path.resolve(__dirname, '../../../..');

describe('SQL engine assets', () => {
  it('lists the worker, the sql.js loader and its WASM binary', () => {
    expect(SQL_BUNDLE_ASSETS).toEqual(['sqljs-worker.js', 'sql-wasm.js', 'sql-wasm.wasm']);
  });

  it('finds them in the source tree and the sql.js package when nothing sits beside the code', () => {
    expect(locateSqlAssets()).toEqual({
      workerPath: path.join(root, 'shared/sql/sqljs-worker.js'),
      sqlJsPath: path.join(root, 'node_modules/sql.js/dist/sql-wasm.js'),
      wasmPath: path.join(root, 'node_modules/sql.js/dist/sql-wasm.wasm'),
    });
  });

  it('gives the copy commands for a bundle directory', () => {
    expect(sqlBundleCopyCommands('/asset-output')).toEqual([
      `cp '${path.join(root, 'shared/sql/sqljs-worker.js')}' '/asset-output/sqljs-worker.js'`,
      `cp '${path.join(root, 'node_modules/sql.js/dist/sql-wasm.js')}' '/asset-output/sql-wasm.js'`,
      `cp '${path.join(root, 'node_modules/sql.js/dist/sql-wasm.wasm')}' '/asset-output/sql-wasm.wasm'`,
    ]);
  });
});
