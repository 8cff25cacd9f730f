/**
 * The files the sandbox loads at run time instead of importing, and where it finds them (docs/hooks.md). Its
 * worker thread starts from its own file, which carries the engine's glue, and the worker reads the engine's
 * WebAssembly from the file beside that glue; neither is in a function's bundle, so a function without hooks pays
 * nothing for them. A bundle whose operation a configured hook runs in gets both copied beside it (the CDK
 * function construct builds the worker file with esbuild and copies the .wasm in `commandHooks.afterBundling`).
 *
 * At run time the worker file is looked for next to the running code first (the bundle case: `__dirname` is the
 * bundle's directory); otherwise the code runs from source (tsx, the tests), and the worker starts from its
 * TypeScript source through tsx, with the .wasm from the package, beside the package's glue.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The worker file beside a bundle: the worker entry and the engine's glue, bundled by esbuild. */
export const SANDBOX_WORKER_FILE = 'hook-sandbox-worker.js';
/** The engine's WebAssembly, under the name its emscripten loader looks for. */
export const SANDBOX_WASM_FILE = 'emscripten-module.wasm';
/** The worker's TypeScript entry, which the bundling step turns into SANDBOX_WORKER_FILE. */
export const SANDBOX_WORKER_ENTRY = path.join(__dirname, 'sandbox-worker.ts');

export interface SandboxAssetPaths {
  /** The worker's file: the bundled JavaScript, or the TypeScript source when `fromSource`. */
  workerFile: string;
  /** True when running from source: the worker must be started through tsx. */
  fromSource: boolean;
}

/**
 * A package's file, resolved when the code runs from source, where node_modules exists. The id is not a literal,
 * so esbuild leaves it to run time: a bundle never takes this path (its files are beside it).
 */
export function resolveFromSource(id: string): string {
  return require.resolve(id);
}

/** True when the worker file sits beside the running code: a bundle whose operation a configured hook runs in. */
export function sandboxShippedBeside(directory: string = __dirname): boolean {
  return existsSync(path.join(directory, SANDBOX_WORKER_FILE));
}

/** Where the sandbox's run-time files are, for the code running from `directory` (this module's by default). */
export function locateSandboxAssets(directory: string = __dirname): SandboxAssetPaths {
  const beside = path.join(directory, SANDBOX_WORKER_FILE);
  if (sandboxShippedBeside(directory)) {
    return { workerFile: beside, fromSource: false };
  }
  return {
    workerFile: SANDBOX_WORKER_ENTRY,
    fromSource: true,
  };
}
