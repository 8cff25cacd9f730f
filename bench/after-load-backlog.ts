/**
 * What a total of each index slot reads beyond its pages right after a load (`after-load.ts`): the batches the folds
 * have not reached (after the slot's head), the bytes of their claims and of their values items in the slot (which a
 * total reads for a slot its claims carry no counts for), and how far the head is behind the newest claim. Read from
 * the store directly, as one Query of the dataset's meta partition; nothing it reads is billed to a request.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { decodeTime } from 'ulid';
import { CHANGE_PREFIX, CHANGE_SLOT_PREFIX, datasetMetaPartition } from '../shared/storage/item-keys';
import { RecordAttr } from '../shared/storage/table-definitions';

export interface SlotBacklog {
  /** The slot's field (the last part of its `countSlotKey`). */
  field: string;
  /** Seconds between the slot's head (its first batch when nothing is folded) and the newest claim. */
  behindSeconds: number;
  batches: number;
  claimBytes: number;
  /** Bytes of the batches' values items in the slot, and how many of the batches carry counts for it instead. */
  valueBytes: number;
  carried: number;
}

/** Roughly an item's stored size: its attributes' names and values as text. */
const bytes = (item: Record<string, unknown>) =>
  Object.entries(item).reduce((sum, [name, value]) => sum + name.length + String(value).length, 0);

export async function slotBacklogs(
  store: DynamoDBDocumentClient,
  table: string,
  datasetCode: string,
): Promise<SlotBacklog[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await store.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey },
        ExpressionAttributeValues: { ':pk': datasetMetaPartition(datasetCode) },
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  const sortKey = (item: Record<string, unknown>) => String(item[RecordAttr.sortKey]);
  const positionOf = (item: Record<string, unknown>) => sortKey(item).slice(CHANGE_PREFIX.length);
  const claims = items.filter((item) => sortKey(item).startsWith(CHANGE_PREFIX) && item.k === 'b');
  const newest = claims.map(positionOf).sort().at(-1);
  const heads = new Map(
    items
      .filter((item) => sortKey(item).startsWith('value-head#'))
      .map((item) => [sortKey(item).slice('value-head#'.length), String(item.through ?? '')]),
  );
  // Per slot, its batches' values items by position.
  const values = new Map<string, Map<string, Record<string, unknown>>>();
  for (const item of items) {
    if (!sortKey(item).startsWith(CHANGE_SLOT_PREFIX)) continue;
    const rest = sortKey(item).slice(CHANGE_SLOT_PREFIX.length);
    const slot = rest.slice(0, rest.lastIndexOf('#'));
    if (!values.has(slot)) values.set(slot, new Map());
    values.get(slot)?.set(rest.slice(rest.lastIndexOf('#') + 1), item);
  }
  return [...values].map(([slot, byPosition]) => {
    const through = heads.get(slot) ?? '';
    const after = claims.filter((claim) => positionOf(claim) > through);
    const carries = (claim: Record<string, unknown>) =>
      typeof claim.c === 'string' && (JSON.parse(claim.c) as Record<string, unknown>)[slot] !== undefined;
    const from = through || (after[0] ? positionOf(after[0]) : '');
    return {
      field: slot.split(':').at(-1) ?? slot,
      behindSeconds: newest && from ? (decodeTime(newest) - decodeTime(from)) / 1000 : 0,
      batches: after.length,
      claimBytes: after.reduce((sum, claim) => sum + bytes(claim), 0),
      valueBytes: after
        .filter((claim) => !carries(claim))
        .reduce((sum, claim) => sum + bytes(byPosition.get(positionOf(claim)) ?? {}), 0),
      carried: after.filter(carries).length,
    };
  });
}

export function backlogLine(datasetCode: string, backlogs: readonly SlotBacklog[]): string {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  return `${datasetCode}: ${backlogs
    .map(
      (b) =>
        `\`${b.field}\` ${b.batches} batches not folded (head ${b.behindSeconds.toFixed(0)} s behind the newest claim): claims ${kb(b.claimBytes)}, values items read ${kb(b.valueBytes)}${b.carried ? ` (${b.carried} carry their counts)` : ''}`,
    )
    .join('; ')}`;
}
