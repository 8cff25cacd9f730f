/**
 * Reading and validating a configuration: its schema, its grants' row filters and its functions' syntax, with
 * every problem by path. What an operator writes is validated further by load-config.ts (custom SQL's queries,
 * against the dialect); a configuration read back from the catalog item was validated so when it was applied,
 * and the functions read it with this module alone, so that only the bundles that run custom SQL carry the
 * dialect (which checks each query again before it runs it).
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Script } from 'node:vm';
import { toDataset } from '../catalog/catalog';
import { type CatalogConfig, catalogConfigSchema, type GrantConfig } from '../catalog/schema';
import { ServiceError } from '../contract/errors';
import { parseRowFilter } from '../records/filter-parser';
import { scriptOf } from '../sandbox/sandbox-contract';

export interface ConfigProblem {
  /** Where in the file, e.g. `datasets[0].fields[2].options`. */
  path: string;
  message: string;
}

export class ConfigError extends Error {
  constructor(
    readonly source: string,
    readonly problems: ConfigProblem[],
  ) {
    super(`${source}: ${problems.length} problem(s)\n${problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(root)' : out;
}

/**
 * Each grant's row filter read as get-list reads filters (suffixes the field's type supports, values of the
 * field's type), so a filter that could never be applied is refused at load rather than failing requests.
 */
function rowFilterProblems(config: CatalogConfig): ConfigProblem[] {
  const datasets = new Map(config.datasets.map((d) => [d.datasetCode, toDataset(d)]));
  const problems: ConfigProblem[] = [];
  const check = (grants: readonly GrantConfig[] | undefined, path: string) => {
    grants?.forEach((grant, j) => {
      const dataset = datasets.get(grant.datasetCode);
      if (!grant.rowFilter || !dataset) return;
      try {
        parseRowFilter(grant.rowFilter, dataset);
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        problems.push({ path: `${path}.grants[${j}].rowFilter`, message: error.message });
      }
    });
  };
  config.applications.forEach((app, i) => {
    check(app.grants, `applications[${i}]`);
    app.users?.forEach((user, u) => {
      check(user.grants, `applications[${i}].users[${u}]`);
    });
  });
  return problems;
}

/**
 * Each function's source compiled, never run: a syntax error is refused at load. Compiling with V8 (`vm.Script`
 * without running it) executes nothing of the partner's code; it runs only in the sandbox.
 */
function functionProblems(config: CatalogConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  (config.functions ?? []).forEach((fn, i) => {
    if (fn.source === undefined) return;
    try {
      new Script(scriptOf(fn.source), { filename: `${fn.name}.js` });
    } catch (error) {
      problems.push({ path: `functions[${i}].${fn.file ? 'file' : 'source'}`, message: (error as Error).message });
    }
  });
  return problems;
}

/** A check beyond the schema's, run once the schema accepts the configuration. */
export type ConfigCheck = (config: CatalogConfig) => ConfigProblem[];

/**
 * Validate a parsed configuration: its schema, its grants' row filters, its functions' syntax, then `checks`;
 * throws `ConfigError` listing every problem.
 */
export function parseConfigWith(value: unknown, source: string, checks: readonly ConfigCheck[] = []): CatalogConfig {
  const result = catalogConfigSchema.safeParse(value);
  if (result.success) {
    const problems = [
      ...rowFilterProblems(result.data),
      ...functionProblems(result.data),
      ...checks.flatMap((check) => check(result.data)),
    ];
    if (problems.length > 0) throw new ConfigError(source, problems);
    return result.data;
  }
  const problems = result.error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
  // Syntax errors are listed too when the rest has problems, so one load lists every problem.
  const functions = (value as { functions?: unknown } | null)?.functions;
  if (Array.isArray(functions)) {
    const readable = functions.map((fn) => {
      const entry = (fn ?? {}) as { name?: unknown; source?: unknown; file?: unknown };
      return typeof entry.source === 'string' ? { ...entry, name: String(entry.name), source: entry.source } : {};
    });
    problems.push(...functionProblems({ functions: readable } as CatalogConfig));
  }
  throw new ConfigError(source, problems);
}

/** A configuration read back from the catalog item: validated when it was applied, its queries by custom SQL. */
export function parseStoredConfig(value: unknown, source: string): CatalogConfig {
  return parseConfigWith(value, source);
}

/** Read a configuration file, with its functions' files, and validate it with `parse`. */
export function readConfigFile(file: string, parse: (value: unknown, source: string) => CatalogConfig): CatalogConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new ConfigError(file, [{ path: '(file)', message: `cannot be read: ${(cause as Error).message}` }]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new ConfigError(file, [{ path: '(file)', message: `is not valid JSON: ${(cause as Error).message}` }]);
  }
  const { config, problems } = withFunctionFiles(json, file);
  if (problems.length === 0) return parse(config, file);
  // Every problem at once: the unreadable files, and the rest of the configuration's (but not "no source" for them).
  const unread = new Set(problems.map((problem) => problem.path.replace(/\.file$/, '.source')));
  try {
    parse(config, file);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems.filter((problem) => !unread.has(problem.path)));
  }
  throw new ConfigError(file, problems);
}

/** Functions given by `file` get their `source` from that file, beside the configuration (`file` stays, for paths). */
function withFunctionFiles(json: unknown, file: string): { config: unknown; problems: ConfigProblem[] } {
  const dir = path.dirname(file);
  const root = json as { functions?: unknown };
  if (root === null || typeof root !== 'object' || !Array.isArray(root.functions))
    return { config: json, problems: [] };
  const problems: ConfigProblem[] = [];
  const functions = root.functions.map((fn: unknown, i: number) => {
    const entry = fn as { file?: unknown; source?: unknown };
    if (entry === null || typeof entry !== 'object' || typeof entry.file !== 'string') return fn;
    if (entry.source !== undefined) return fn;
    try {
      return { ...entry, source: readFileSync(path.resolve(dir, entry.file), 'utf8') };
    } catch (cause) {
      problems.push({ path: `functions[${i}].file`, message: `cannot be read: ${(cause as Error).message}` });
      return fn;
    }
  });
  return { config: { ...root, functions }, problems };
}
