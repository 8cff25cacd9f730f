/**
 * Index (GSI) writes, computed. The local store (dynalite) maintains global secondary indexes but leaves their
 * writes out of ConsumedCapacity, while DynamoDB bills them: one write per index entry put or deleted, of
 * ⌈entry size / 1 KB⌉ units. This module applies DynamoDB's rules to an item before and after a write, with the
 * table's own index definitions (table-definitions.ts), so the capacity benchmark can add what a deployment pays.
 *
 * Rules (DynamoDB developer guide, "Provisioned throughput considerations for global secondary indexes"):
 * an item that enters an index costs a put; one that leaves it, a delete; one whose index key changes, a delete
 * and a put; one that stays with the same key costs an update when a projected attribute changed, else nothing.
 */
import type { IndexDefinition, TableDefinition } from '../shared/storage/table-definitions';

type Item = Record<string, unknown>;

/** DynamoDB's item size: attribute names plus values (strings in UTF-8, numbers about 1 byte per 2 digits). */
export function itemSize(item: Item): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueSize(value), 0);
}

function valueSize(value: unknown): number {
  if (value === null || value === undefined) return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(String(Math.abs(value)).replace(/[.-]/g, '').length / 2) + 1;
  if (typeof value === 'boolean') return 1;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + valueSize(v), 0);
  if (typeof value === 'object') return 3 + itemSize(value as Item);
  return Buffer.byteLength(String(value));
}

function entryOf(table: TableDefinition, index: IndexDefinition, item: Item | undefined): Item | undefined {
  if (!item) return undefined;
  const keys = [index.partitionKey.name, index.sortKey.name];
  if (keys.some((key) => item[key] === undefined || item[key] === null)) return undefined;
  if (index.projection === 'ALL') return item;
  const names = new Set([
    ...keys,
    table.partitionKey.name,
    ...(table.sortKey ? [table.sortKey.name] : []),
    ...(index.projection === 'INCLUDE' ? (index.nonKeyAttributes ?? []) : []),
  ]);
  return Object.fromEntries(Object.entries(item).filter(([name]) => names.has(name)));
}

const canonical = (entry: Item) => JSON.stringify(Object.entries(entry).sort(([a], [b]) => (a < b ? -1 : 1)));

const units = (entry: Item) => Math.max(1, Math.ceil(itemSize(entry) / 1024));

/** The write units DynamoDB bills to the table's indexes for a write that turns `before` into `after`. */
export function indexWriteUnits(table: TableDefinition, before: Item | undefined, after: Item | undefined): number {
  let total = 0;
  for (const index of table.globalSecondaryIndexes) {
    const old = entryOf(table, index, before);
    const next = entryOf(table, index, after);
    if (!old && next) total += units(next);
    else if (old && !next) total += units(old);
    else if (old && next) {
      const keyChanged =
        old[index.partitionKey.name] !== next[index.partitionKey.name] ||
        old[index.sortKey.name] !== next[index.sortKey.name];
      if (keyChanged) total += units(old) + units(next);
      else if (canonical(old) !== canonical(next)) total += units(next);
    }
  }
  return total;
}
