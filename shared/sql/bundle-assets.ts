/**
 * The files the SQL engine loads at run time instead of importing, and where it finds them. esbuild cannot
 * inline them into a Lambda bundle: the worker thread starts from its own file, and sql.js reads its .wasm from
 * disk. So a bundle that contains the engine needs these files copied next to it (the CDK function construct
 * does that with esbuild's `commandHooks.afterBundling`, using `sqlBundleCopyCommands`).
 *
 * At run time each file is looked for next to the running code first (the bundle case: `__dirname` is the
 * bundle's directory) and otherwise in the sql.js package (source runs under jest or tsx, where
 * `__dirname` is this directory and node_modules exists).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The worker's own file: plain JavaScript that Node starts as is. */
export const SQL_WORKER_FILE = 'sqljs-worker.js';
/** sql.js's loader and its WebAssembly binary, from the `sql.js` package's `dist` folder. */
export const SQL_JS_FILE = 'sql-wasm.js';
export const SQL_WASM_FILE = 'sql-wasm.wasm';

/** MySQL's functions as SQLite functions, which the worker registers on every database (shared/sql-dialect). */
export const SQL_FUNCTIONS_FILE = 'sqlite-functions.js';

/** Every file that must sit next to a bundle that uses the SQL engine. */
export const SQL_BUNDLE_ASSETS: readonly string[] = [SQL_WORKER_FILE, SQL_JS_FILE, SQL_WASM_FILE, SQL_FUNCTIONS_FILE];

export interface SqlAssetPaths {
  workerPath: string;
  sqlJsPath: string;
  wasmPath: string;
  functionsPath: string;
}

const FUNCTIONS_SOURCE = path.join(__dirname, '..', 'sql-dialect', SQL_FUNCTIONS_FILE);

/** Where the engine's run-time files are, for the code running from `directory` (this module's by default). */
export function locateSqlAssets(directory: string = __dirname): SqlAssetPaths {
  return {
    workerPath: path.join(directory, SQL_WORKER_FILE),
    sqlJsPath: besideOrPackage(directory, SQL_JS_FILE),
    wasmPath: besideOrPackage(directory, SQL_WASM_FILE),
    functionsPath: existsSync(path.join(directory, SQL_FUNCTIONS_FILE))
      ? path.join(directory, SQL_FUNCTIONS_FILE)
      : FUNCTIONS_SOURCE,
  };
}

function besideOrPackage(directory: string, fileName: string): string {
  const beside = path.join(directory, fileName);
  if (existsSync(beside)) return beside;
  return require.resolve(`sql.js/dist/${fileName}`);
}

/** Build time: each asset's source file, to be copied under its `fileName` next to the bundle. */
export function sqlBundleAssetSources(): { fileName: string; sourcePath: string }[] {
  return [
    { fileName: SQL_WORKER_FILE, sourcePath: path.join(__dirname, SQL_WORKER_FILE) },
    { fileName: SQL_JS_FILE, sourcePath: require.resolve(`sql.js/dist/${SQL_JS_FILE}`) },
    { fileName: SQL_WASM_FILE, sourcePath: require.resolve(`sql.js/dist/${SQL_WASM_FILE}`) },
    { fileName: SQL_FUNCTIONS_FILE, sourcePath: FUNCTIONS_SOURCE },
  ];
}

/** Build time: shell commands for `commandHooks.afterBundling(inputDir, outputDir)` that copy the assets. */
export function sqlBundleCopyCommands(outputDir: string): string[] {
  return sqlBundleAssetSources().map(
    ({ fileName, sourcePath }) => `cp ${shellQuote(sourcePath)} ${shellQuote(path.join(outputDir, fileName))}`,
  );
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
