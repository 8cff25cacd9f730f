/**
 * A function's bundle built again with esbuild's API and the options `cdk synth` bundles it with
 * (FUNCTION_BUNDLING, as aws-cdk-lib's NodejsFunction passes them to esbuild): the same bytes, and esbuild's
 * metafile, which says what the bundle is made of and which module brought each part in.
 */
import path from 'node:path';
import { type BuildOptions, build, type Metafile, type Plugin } from 'esbuild';
import { FUNCTION_BUNDLING } from '../../lib/operation-function';
import { REPO_ROOT } from './paths';

/** FUNCTION_BUNDLING as esbuild options: the arguments NodejsFunction gives the esbuild command line. */
export function functionBuildOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: FUNCTION_BUNDLING.target,
    format: FUNCTION_BUNDLING.format,
    outfile,
    minify: FUNCTION_BUNDLING.minify,
    sourcemap: FUNCTION_BUNDLING.sourceMap,
    sourcesContent: FUNCTION_BUNDLING.sourcesContent,
    external: [...FUNCTION_BUNDLING.externalModules],
    mainFields: [...FUNCTION_BUNDLING.mainFields],
    absWorkingDir: REPO_ROOT,
    metafile: true,
    write: false,
    logLevel: 'silent',
  };
}

export interface BuiltBundle {
  /** The bundle's bytes (`index.js`). */
  code: Uint8Array;
  metafile: Metafile;
}

/** Build `entry` as its function is bundled, in memory. */
export async function buildFunctionBundle(entry: string, plugins: Plugin[] = []): Promise<BuiltBundle> {
  const outfile = path.join(REPO_ROOT, 'cdk.out', 'function-bundle', 'index.js');
  const result = await build({ ...functionBuildOptions(entry, outfile), plugins });
  const code = result.outputFiles?.find((file) => file.path === outfile)?.contents;
  if (!code || !result.metafile) throw new Error(`esbuild produced no ${outfile} for ${entry}`);
  return { code, metafile: result.metafile };
}

/** The chain of imports by which the bundle of `metafile` reaches `input` from its entry (shortest first). */
export function importChain(metafile: Metafile, input: string): string[] {
  const entry = Object.values(metafile.outputs).find((output) => output.entryPoint !== undefined)?.entryPoint;
  if (!entry) return [];
  const reachedFrom = new Map<string, string>();
  const queue = [entry];
  const seen = new Set(queue);
  while (queue.length > 0) {
    const current = queue.shift() as string;
    if (current === input) break;
    for (const imported of metafile.inputs[current]?.imports ?? []) {
      if (imported.external || seen.has(imported.path)) continue;
      seen.add(imported.path);
      reachedFrom.set(imported.path, current);
      queue.push(imported.path);
    }
  }
  if (!seen.has(input)) return [];
  const chain: string[] = [];
  for (let at: string | undefined = input; at !== undefined; at = reachedFrom.get(at)) chain.unshift(at);
  return chain;
}

/**
 * The bytes of a bundle that run when it starts: every module the entry reaches through static imports (and
 * esbuild's own runtime), not those only a dynamic `import()` reaches, which esbuild wraps to run on first use.
 */
export function startupBytes(bundle: BuiltBundle): number {
  const { metafile } = bundle;
  const [output] = Object.values(metafile.outputs).filter((out) => out.entryPoint !== undefined);
  if (!output?.entryPoint) return bundle.code.byteLength;
  const eager = new Set<string>([output.entryPoint]);
  const queue = [output.entryPoint];
  for (let input = queue.shift(); input !== undefined; input = queue.shift()) {
    for (const imported of metafile.inputs[input]?.imports ?? []) {
      if (imported.kind === 'dynamic-import' || imported.external || eager.has(imported.path)) continue;
      eager.add(imported.path);
      queue.push(imported.path);
    }
  }
  const lazy = Object.entries(output.inputs)
    .filter(([input]) => !eager.has(input))
    .reduce((sum, [, part]) => sum + part.bytesInOutput, 0);
  return bundle.code.byteLength - lazy;
}
