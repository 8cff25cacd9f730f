/**
 * Running the service from what deploys: the one loader of synthesized bundles. `npm run test:bundles`
 * synthesizes the CDK app and sets HANDLER_BUNDLES_DIR to its output, and test/infra/lib/operation-function/bundled-handlers.test.ts
 * synthesizes its own; either way the harness loads each route's handler from the esbuild bundle `cdk synth`
 * produced for its Lambda function, instead of from the TypeScript sources.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ProxyHandler } from '../../bin/local/lambda-http';

interface TemplateResource {
  Type: string;
  Metadata?: Record<string, string>;
}

/** The bundle directory of each operation function in a `cdk synth` output folder, by its `functions/` file. */
export function synthesizedBundles(outdir: string): Map<string, string> {
  const bundles = new Map<string, string>();
  for (const file of readdirSync(outdir).filter((f) => f.endsWith('.template.json'))) {
    const template = JSON.parse(readFileSync(path.join(outdir, file), 'utf8')) as {
      Resources?: Record<string, TemplateResource>;
    };
    for (const resource of Object.values(template.Resources ?? {})) {
      const match = /\/Op-([a-z-]+)\/Function\/Resource$/.exec(resource.Metadata?.['aws:cdk:path'] ?? '');
      const asset = resource.Metadata?.['aws:asset:path'];
      if (resource.Type === 'AWS::Lambda::Function' && match?.[1] && asset) {
        bundles.set(match[1], path.join(outdir, asset));
      }
    }
  }
  return bundles;
}

const FUNCTIONS_DIR = path.join(__dirname, '..', '..', 'functions');

/**
 * A `loadHandler` for the local server that requires each function's synthesized bundle. A route whose handler
 * is not written yet has only a stand-in bundle: it serves nothing. `onLoad` hears each bundle file loaded.
 */
export function bundleLoader(
  outdir: string,
  onLoad?: (bundleFile: string) => void,
): (functionFile: string) => Promise<ProxyHandler | undefined> {
  const bundles = synthesizedBundles(path.resolve(outdir));
  if (bundles.size === 0) throw new Error(`no operation function bundles in ${outdir}; run cdk synth first`);
  return async (functionFile) => {
    if (!existsSync(path.join(FUNCTIONS_DIR, `${functionFile}.ts`))) return undefined;
    const dir = bundles.get(functionFile);
    if (!dir) throw new Error(`no synthesized bundle for functions/${functionFile}.ts in ${outdir}`);
    const file = path.join(dir, 'index.js');
    onLoad?.(file);
    return (require(file) as { handler: ProxyHandler }).handler;
  };
}

/**
 * A bundle carries its own copy of the request log, which writes JSON lines to standard output as in Lambda:
 * take those lines for the test, pass everything else through. Returns the function that restores stdout.
 */
export function captureLogLines(sink: (line: string) => void): () => void {
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (text.startsWith('{"_aws"')) {
      for (const line of text.split('\n').filter(Boolean)) sink(line);
      return true;
    }
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  return () => {
    process.stdout.write = write;
  };
}
