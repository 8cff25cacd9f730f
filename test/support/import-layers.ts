/**
 * The direction of imports, measured: reads every module of the service (`packages/client/`, `shared/`,
 * `functions/`, `lib/`, `bin/`), resolves its relative imports (type-only ones too: they bind the same way), and reports the
 * imports that run from a lower layer to a higher one and every circle, between files and between folders.
 * The layer order is the one docs/layers.md describes; biome.json's `noRestrictedImports` overrides enforce the
 * same order at lint time, and test/unit/import-layers.test.ts checks both agree with it.
 *
 * Run on its own to print the figures: `npx tsx test/support/import-layers.ts`.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * Layers from the bottom up: a module may import its own folder and the folders before it. A folder of
 * `shared/` is a layer; every other top-level folder is one.
 */
export const LAYERS: readonly string[] = [
  // The installable client package: it imports nothing of the service, which verifies with its signing module.
  'packages/client',
  'shared/contract',
  'shared/catalog',
  // The dialect of registered queries: configuration loading and custom SQL read it; it reads the contract and
  // the catalog's model only.
  'shared/sql-dialect',
  'shared/runtime',
  'shared/observability',
  'shared/http',
  'shared/aws',
  'shared/records',
  'shared/quota',
  'shared/storage',
  'shared/access',
  'shared/auth',
  'shared/operation',
  'shared/idempotency',
  'shared/query',
  'shared/sql',
  'shared/changes',
  'shared/indexing',
  // The MySQL mirror of the datasets, fed by the change log and backfilled as index builds read.
  'shared/mirror',
  'shared/sandbox',
  'shared/catalog-store',
  'shared/operations',
  'shared/hooks',
  'shared/composition',
  'functions',
  'lib',
  'bin',
];

/**
 * The imports allowed to run upward, each with its reason written beside it in the importing file. Keys are
 * `from -> to` file paths.
 */
export const ALLOWED_UPWARD: ReadonlySet<string> = new Set<string>([]);

export const SOURCE_ROOTS = ['packages', 'shared', 'functions', 'lib', 'bin'];

export interface ImportEdge {
  from: string;
  to: string;
}

/** The folder (layer) a repository path belongs to. */
export function layerOf(path: string): string {
  const parts = path.split('/');
  return (parts[0] === 'shared' || parts[0] === 'packages') && parts.length > 2
    ? `${parts[0]}/${parts[1]}`
    : (parts[0] as string);
}

function sourceFiles(root: string, dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const path = join(dir, name);
    // A package's build output and dependencies are not sources.
    if (name === 'dist' || name === 'node_modules') continue;
    if (statSync(join(root, path)).isDirectory()) found.push(...sourceFiles(root, path));
    else if (/\.(ts|js)$/.test(name) && !name.endsWith('.d.ts')) found.push(path.split(sep).join('/'));
  }
  return found;
}

function resolveImport(root: string, from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(root, dirname(from), specifier);
  // The client package's sources name their imports `./x.js`, as Node.js ES modules require; the file is x.ts.
  const typescript = base.replace(/\.js$/, '.ts');
  for (const candidate of [base, `${base}.ts`, `${base}.js`, typescript, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(root, candidate).split(sep).join('/');
  }
  return undefined;
}

/** Every relative import between the service's modules. */
export function readImports(root: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const top of SOURCE_ROOTS) {
    if (!existsSync(join(root, top))) continue;
    for (const file of sourceFiles(root, top)) {
      const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
      const targets = new Set<string>();
      for (const ref of info.importedFiles) {
        const to = resolveImport(root, file, ref.fileName);
        if (to && to !== file && SOURCE_ROOTS.includes(to.split('/')[0] as string)) targets.add(to);
      }
      for (const to of targets) edges.push({ from: file, to });
    }
  }
  return edges;
}

function rank(layer: string): number {
  const index = LAYERS.indexOf(layer);
  if (index < 0) throw new Error(`folder ${layer} has no place in LAYERS`);
  return index;
}

/** Imports from a folder to a folder above it. */
export function upwardImports(edges: readonly ImportEdge[]): ImportEdge[] {
  return edges.filter((edge) => rank(layerOf(edge.to)) > rank(layerOf(edge.from)));
}

/** The strongly connected groups of more than one node (Tarjan), each a circle of imports. */
export function circles(nodes: Iterable<string>, edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const node of nodes) next.set(node, []);
  for (const { from, to } of edges) if (from !== to) next.get(from)?.push(to);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const target of next.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) as number, index.get(target) as number));
      }
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const node of next.keys()) if (!index.has(node)) visit(node);
  return groups;
}

export interface LayerReport {
  imports: number;
  upward: ImportEdge[];
  fileCircles: string[][];
  folderCircles: string[][];
}

export function layerReport(root: string): LayerReport {
  const edges = readImports(root);
  const files = new Set(edges.flatMap((edge) => [edge.from, edge.to]));
  const folderEdges = edges
    .map((edge) => ({ from: layerOf(edge.from), to: layerOf(edge.to) }))
    .filter((edge) => edge.from !== edge.to);
  const folders = new Set(folderEdges.flatMap((edge) => [edge.from, edge.to]));
  return {
    imports: edges.length,
    upward: upwardImports(edges),
    fileCircles: circles(files, edges),
    folderCircles: circles(folders, folderEdges),
  };
}

/** The last path segment of a layer, as it appears in an import specifier (`shared/http` -> `http`). */
function folderName(layer: string): string {
  return layer.split('/').pop() as string;
}

export interface RestrictedImportsOverride {
  includes: string[];
  linter: {
    rules: {
      style: {
        noRestrictedImports: {
          level: 'error';
          options: { patterns: { group: string[]; message: string }[] };
        };
      };
    };
  };
}

/**
 * biome.json's overrides that make `npm run lint` enforce the order: each layer may not name a folder above it.
 * `npx tsx test/support/import-layers.ts --write-biome` writes them; the layer test checks they are current.
 */
export function restrictedImportOverrides(): RestrictedImportsOverride[] {
  return LAYERS.slice(0, -1).map((layer, i) => ({
    includes: [`${layer}/**`],
    linter: {
      rules: {
        style: {
          noRestrictedImports: {
            level: 'error',
            options: {
              // A module inside the folder: every import names a file (no folder has an index module), and the
              // folder alone would also match a file of the same name elsewhere (the client's operations.ts).
              patterns: LAYERS.slice(i + 1).map((higher) => ({
                group: [`**/${folderName(higher)}/**`],
                message: `${layer} sits below ${higher} and may not import it: imports run downward (docs/layers.md).`,
              })),
            },
          },
        },
      },
    },
  }));
}

/** Whether an override of biome.json is one of the layer overrides (the others are kept as they are). */
export function isLayerOverride(override: { linter?: { rules?: { style?: object } } }): boolean {
  return Boolean(override.linter?.rules?.style && 'noRestrictedImports' in override.linter.rules.style);
}

if (require.main === module && process.argv.includes('--write-biome')) {
  const file = resolve(__dirname, '../../biome.json');
  const config = JSON.parse(readFileSync(file, 'utf8'));
  config.overrides = [
    ...(config.overrides ?? []).filter((override: object) => !isLayerOverride(override)),
    ...restrictedImportOverrides(),
  ];
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
} else if (require.main === module) {
  const report = layerReport(resolve(__dirname, '../..'));
  console.log(`imports between modules: ${report.imports}`);
  const folderArrows = new Set(report.upward.map((edge) => `${layerOf(edge.from)} -> ${layerOf(edge.to)}`));
  console.log(`upward imports: ${report.upward.length} (${folderArrows.size} folder-to-folder arrows)`);
  for (const edge of report.upward) console.log(`  ${edge.from} -> ${edge.to}`);
  console.log(`file circles: ${report.fileCircles.length}`);
  for (const group of report.fileCircles) console.log(`  ${group.join(' <-> ')}`);
  console.log(`folder circles: ${report.folderCircles.length}`);
  for (const group of report.folderCircles) console.log(`  ${group.join(' <-> ')}`);
}
