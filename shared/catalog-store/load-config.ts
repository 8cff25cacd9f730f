/** Reading and validating a configuration file; a wrong one is refused with every problem, by path. */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Script } from 'node:vm';
import { toDataset } from '../catalog/catalog';
import { type CatalogConfig, catalogConfigSchema, type GrantConfig } from '../catalog/schema';
import { deploymentUrlProblem } from '../changes/webhook-targets';
import { ServiceError } from '../contract/errors';
import { parseRowFilter } from '../records/filter-parser';
import { scriptOf } from '../sandbox/sandbox-contract';
import { queryProblems } from '../sql-dialect/dialect';

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

/** Validate a parsed configuration; throws `ConfigError` listing every problem. */
export function parseConfig(value: unknown, source = 'configuration'): CatalogConfig {
  const result = catalogConfigSchema.safeParse(value);
  if (result.success) {
    const problems = [
      ...rowFilterProblems(result.data),
      ...functionProblems(result.data),
      // Each query read as MySQL 8 and checked against the datasets: what custom SQL cannot answer is refused here.
      ...queryProblems(result.data).map(({ index, message }) => ({ path: `queries[${index}].sql`, message })),
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

/**
 * What a deployment refuses beyond the schema (docs/interface.md §18): a webhook URL that is not https, or that
 * names a private, loopback or link-local address (the delivery checks the resolved address again at each
 * attempt), and a webhook `secret` in the file (a deployment generates each in the secret store). Throws
 * `ConfigError` listing every problem.
 */
export function checkDeploymentConfig(config: CatalogConfig, source = 'configuration'): CatalogConfig {
  const problems: ConfigProblem[] = [];
  (config.webhooks ?? []).forEach((webhook, i) => {
    const urlProblem = deploymentUrlProblem(webhook.url);
    if (urlProblem) problems.push({ path: `webhooks[${i}].url`, message: urlProblem });
    if (webhook.secret !== undefined) {
      problems.push({
        path: `webhooks[${i}].secret`,
        message: "is for local runs only: a deployment generates each subscription's secret in the secret store",
      });
    }
  });
  if (problems.length > 0) throw new ConfigError(source, problems);
  return config;
}

/** Read, parse and validate a configuration file. */
export function loadConfigFile(file: string): CatalogConfig {
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
  if (problems.length === 0) return parseConfig(config, file);
  // Every problem at once: the unreadable files, and the rest of the configuration's (but not "no source" for them).
  const unread = new Set(problems.map((problem) => problem.path.replace(/\.file$/, '.source')));
  try {
    parseConfig(config, file);
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
