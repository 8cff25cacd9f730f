/** Reading and validating a configuration file; a wrong one is refused with every problem, by path. */
import { readFileSync } from 'node:fs';
import { toDataset } from '../catalog/catalog';
import { type CatalogConfig, catalogConfigSchema } from '../catalog/schema';
import { ServiceError } from '../contract/errors';
import { parseRowFilter } from '../records/filter-parser';

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
  config.applications.forEach((app, i) => {
    app.grants?.forEach((grant, j) => {
      const dataset = datasets.get(grant.datasetCode);
      if (!grant.rowFilter || !dataset) return;
      try {
        parseRowFilter(grant.rowFilter, dataset);
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        problems.push({ path: `applications[${i}].grants[${j}].rowFilter`, message: error.message });
      }
    });
  });
  return problems;
}

/** Validate a parsed configuration; throws `ConfigError` listing every problem. */
export function parseConfig(value: unknown, source = 'configuration'): CatalogConfig {
  const result = catalogConfigSchema.safeParse(value);
  if (result.success) {
    const problems = rowFilterProblems(result.data);
    if (problems.length > 0) throw new ConfigError(source, problems);
    return result.data;
  }
  const problems = result.error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
  throw new ConfigError(source, problems);
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
  return parseConfig(json, file);
}
