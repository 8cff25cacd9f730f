/**
 * A new configuration compared with the one the store applied last (docs/interface.md §17): what it adds and
 * removes, the indexes it builds and drops (with the records each touches), and every change that is refused.
 * Refused as a whole: a field's type changed (but `integer` to `number`, whose stored values and index keys stay
 * valid), an enum option removed while stored records still hold it, a dataset's owner changed. A field or a
 * dataset that is removed is remembered (its definition as last applied), so adding it back later is compared with
 * what its stored values are, not accepted as new.
 *
 * Pure but for the questions about stored records it asks its port (whether a dataset holds records, how many,
 * which of some enum options are in use); `apply-configuration.ts` answers them from the store and writes the
 * result, `das config plan` prints it.
 */
import { type IndexRegistry, indexedFields, registryForConfiguration } from '../catalog/index-registry';
import type { CatalogConfig, DatasetConfig, FieldConfig } from '../catalog/schema';
import type { ConfigProblem } from './read-config';

/** What a configuration file no longer says but the store must remember: removed datasets and fields. */
export interface RetiredDefinitions {
  /** Datasets removed from the configuration, as last applied. */
  datasets: DatasetConfig[];
  /** Fields removed from datasets that are still configured, as last applied, by dataset code. */
  fields: Record<string, FieldConfig[]>;
}

export const NO_RETIRED_DEFINITIONS: RetiredDefinitions = { datasets: [], fields: {} };

/** The configuration a store applied last, with what the configuration file does not say. */
export interface AppliedState {
  config: CatalogConfig;
  indexes: IndexRegistry;
  retired: RetiredDefinitions;
}

/** Questions about the records a store holds, answered by the store (storage/dataset-probes.ts). */
export interface StoredRecordFacts {
  /** Whether the dataset holds any record. */
  hasRecords(datasetCode: string): Promise<boolean>;
  /** How many records the dataset holds (as the record counter tells without writing). */
  recordCount(datasetCode: string): Promise<number>;
  /** Which of `values` some stored record of the dataset holds in `field` (`previous` names its complete index). */
  usedValues(datasetCode: string, field: string, values: readonly string[], previous: IndexRegistry): Promise<string[]>;
}

export interface IndexPlan {
  field: string;
  /** Records the build or drop will touch: the dataset's records now. */
  records: number;
}

export interface DatasetPlan {
  datasetCode: string;
  change: 'added' | 'removed' | 'changed' | 'unchanged';
  fieldsAdded: string[];
  fieldsRemoved: string[];
  /** Indexes to build in the background (records stored before need their keys). */
  indexesToBuild: IndexPlan[];
  /** Indexes complete at once: nothing stored needs indexing. */
  indexesReady: string[];
  indexesToDrop: IndexPlan[];
}

export interface ConfigurationPlan {
  /** No configuration had been applied to the store. */
  first: boolean;
  datasets: DatasetPlan[];
  /** Every refused change, by path in the new configuration; the configuration is refused when there is any. */
  refused: ConfigProblem[];
  /** What the store keeps once the configuration is applied (meaningful only when nothing is refused). */
  next: AppliedState;
}

export interface PlanOptions {
  now: number;
  /** How long until every function serves the new configuration (ms): builds start after it. */
  settleMs: number;
}

const datasetPath = (config: CatalogConfig, code: string) =>
  `datasets[${config.datasets.findIndex((d) => d.datasetCode === code)}]`;

/** The previous definition of a dataset: configured, or removed and remembered. */
function previousDataset(previous: AppliedState | undefined, code: string): DatasetConfig | undefined {
  return (
    previous?.config.datasets.find((d) => d.datasetCode === code) ??
    previous?.retired.datasets.find((d) => d.datasetCode === code)
  );
}

/** The previous definition of a field: in the dataset's previous definition, or removed and remembered. */
function previousField(
  previous: AppliedState | undefined,
  before: DatasetConfig | undefined,
  code: string,
  name: string,
): FieldConfig | undefined {
  return before?.fields.find((f) => f.name === name) ?? previous?.retired.fields[code]?.find((f) => f.name === name);
}

/** Whether values stored as `from` are valid values of `to` with the same index keys. */
function compatibleType(from: FieldConfig['type'], to: FieldConfig['type']): boolean {
  return from === to || (from === 'integer' && to === 'number');
}

/** Compare `next` with what the store applied last (`previous`; `undefined` for a store that has applied nothing). */
export async function planConfigurationChange(
  previous: AppliedState | undefined,
  next: CatalogConfig,
  facts: StoredRecordFacts,
  options: PlanOptions,
): Promise<ConfigurationPlan> {
  const refused: ConfigProblem[] = [];
  const previousIndexes = previous?.indexes ?? {};
  const datasets: DatasetPlan[] = [];
  const counts = new Map<string, Promise<number>>();
  const recordCount = (code: string) => {
    let count = counts.get(code);
    if (!count) {
      count = facts.recordCount(code);
      counts.set(code, count);
    }
    return count;
  };

  for (const dataset of next.datasets) {
    const code = dataset.datasetCode;
    const at = datasetPath(next, code);
    const before = previousDataset(previous, code);
    if (before && before.appCode !== dataset.appCode) {
      refused.push({
        path: `${at}.appCode`,
        message: `dataset '${code}' belongs to '${before.appCode}'; a dataset's owner cannot change (stored records stay where they are)`,
      });
    }
    const fieldsAdded: string[] = [];
    for (const [j, field] of dataset.fields.entries()) {
      const earlier = previousField(previous, before, code, field.name);
      if (!earlier) continue;
      if (!compatibleType(earlier.type, field.type)) {
        refused.push({
          path: `${at}.fields[${j}].type`,
          message:
            `field '${field.name}' of dataset '${code}' holds ${earlier.type} values; its type cannot change to ` +
            `${field.type} (only integer may become number). Add a field with a new name instead`,
        });
        continue;
      }
      const removed = (earlier.options ?? []).filter((option) => !(field.options ?? []).includes(option));
      if (field.type === 'enum' && removed.length > 0) {
        const used = await facts.usedValues(code, field.name, removed, previousIndexes);
        for (const option of used) {
          refused.push({
            path: `${at}.fields[${j}].options`,
            message: `option '${option}' of field '${field.name}' is still used by stored records of dataset '${code}'; it cannot be removed`,
          });
        }
      }
    }
    const current = previous?.config.datasets.find((d) => d.datasetCode === code);
    if (current) {
      for (const field of dataset.fields)
        if (!current.fields.some((f) => f.name === field.name)) fieldsAdded.push(field.name);
    }
    const fieldsRemoved = current
      ? current.fields.filter((f) => !dataset.fields.some((g) => g.name === f.name)).map((f) => f.name)
      : [];
    datasets.push({
      datasetCode: code,
      change: !current ? 'added' : 'unchanged',
      fieldsAdded,
      fieldsRemoved,
      indexesToBuild: [],
      indexesReady: [],
      indexesToDrop: [],
    });
  }
  for (const removed of previous?.config.datasets ?? []) {
    if (next.datasets.some((d) => d.datasetCode === removed.datasetCode)) continue;
    datasets.push({
      datasetCode: removed.datasetCode,
      change: 'removed',
      fieldsAdded: [],
      fieldsRemoved: [],
      indexesToBuild: [],
      indexesReady: [],
      indexesToDrop: [],
    });
  }

  // Indexes: complete at once only where nothing stored needs a key and no function can write the dataset under an
  // earlier configuration.
  const atOnce = new Set<string>();
  for (const dataset of next.datasets) {
    const code = dataset.datasetCode;
    const served = previous?.config.datasets.some((d) => d.datasetCode === code) ?? false;
    if (!served && indexedFields(dataset).length > 0 && !(await facts.hasRecords(code))) atOnce.add(code);
  }
  const indexes = registryForConfiguration(previousIndexes, next, {
    now: options.now,
    settleMs: options.settleMs,
    completeAtOnce: (code) => atOnce.has(code),
  });
  for (const plan of datasets) {
    const before = new Map(
      (previousIndexes[plan.datasetCode]?.indexes ?? []).map((index) => [index.build, index] as const),
    );
    for (const index of indexes[plan.datasetCode]?.indexes ?? []) {
      const earlier = before.get(index.build);
      if (!earlier && index.state === 'complete') plan.indexesReady.push(index.field);
      else if (!earlier) plan.indexesToBuild.push({ field: index.field, records: await recordCount(plan.datasetCode) });
      else if (index.state === 'dropping' && earlier.state !== 'dropping') {
        plan.indexesToDrop.push({ field: index.field, records: await recordCount(plan.datasetCode) });
      }
    }
    const changed =
      plan.fieldsAdded.length + plan.fieldsRemoved.length + plan.indexesToBuild.length + plan.indexesToDrop.length > 0;
    if (plan.change === 'unchanged' && changed) plan.change = 'changed';
  }

  return {
    first: previous === undefined,
    datasets,
    refused,
    next: { config: next, indexes, retired: retiredAfter(previous, next) },
  };
}

/** The definitions to remember after applying `next`: removed ones added, ones that came back forgotten. */
function retiredAfter(previous: AppliedState | undefined, next: CatalogConfig): RetiredDefinitions {
  const configured = new Map(next.datasets.map((d) => [d.datasetCode, d]));
  const datasets = new Map((previous?.retired.datasets ?? []).map((d) => [d.datasetCode, d]));
  const fields: Record<string, FieldConfig[]> = {};
  for (const [code, list] of Object.entries(previous?.retired.fields ?? {})) fields[code] = [...list];
  // A retired dataset's removed fields stay with it, so fold them in when it is retired.
  for (const dataset of previous?.config.datasets ?? []) {
    if (configured.has(dataset.datasetCode)) continue;
    const removedFields = fields[dataset.datasetCode] ?? [];
    delete fields[dataset.datasetCode];
    datasets.set(dataset.datasetCode, {
      ...dataset,
      fields: [...dataset.fields, ...removedFields.filter((f) => !dataset.fields.some((g) => g.name === f.name))],
    });
  }
  for (const dataset of next.datasets) {
    const code = dataset.datasetCode;
    const back = datasets.get(code);
    const current = previous?.config.datasets.find((d) => d.datasetCode === code);
    // Fields of the previous definition that the new one lacks are remembered; fields it has again are forgotten.
    const remembered = [...(fields[code] ?? []), ...(back?.fields ?? []), ...(current?.fields ?? [])].filter(
      (f) => !dataset.fields.some((g) => g.name === f.name),
    );
    datasets.delete(code);
    const unique = new Map(remembered.map((f) => [f.name, f]));
    if (unique.size > 0) fields[code] = [...unique.values()];
    else delete fields[code];
  }
  return { datasets: [...datasets.values()], fields };
}

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

/** The plan in lines a person reads: per dataset what changes, then every refused change by path. */
export function describeConfigurationPlan(plan: ConfigurationPlan): string[] {
  const lines: string[] = [];
  for (const dataset of plan.datasets) {
    if (dataset.change === 'unchanged') continue;
    lines.push(`  ${dataset.datasetCode} (${dataset.change})`);
    if (dataset.fieldsAdded.length) lines.push(`    fields added: ${dataset.fieldsAdded.join(', ')}`);
    if (dataset.fieldsRemoved.length) lines.push(`    fields removed: ${dataset.fieldsRemoved.join(', ')}`);
    for (const index of dataset.indexesToBuild) {
      lines.push(`    index to build: ${index.field} (${plural(index.records, 'record')} to index)`);
    }
    if (dataset.indexesReady.length) lines.push(`    indexes ready at once: ${dataset.indexesReady.join(', ')}`);
    for (const index of dataset.indexesToDrop) {
      lines.push(`    index to drop: ${index.field} (${plural(index.records, 'record')} to clear)`);
    }
  }
  if (lines.length === 0) lines.push('  no dataset changes');
  if (plan.refused.length > 0) {
    lines.push(`Refused: ${plural(plan.refused.length, 'problem')}; the configuration applied last keeps serving`);
    for (const problem of plan.refused) lines.push(`  ${problem.path}: ${problem.message}`);
  }
  return lines;
}
