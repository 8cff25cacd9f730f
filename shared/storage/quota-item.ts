/**
 * The quota item of one application and the one conditional UpdateItem a `QuotaWrite` (quota/quota-image.ts)
 * becomes: pure functions, no I/O (`quota-store.ts` sends what these build).
 *
 *   pk         'app#<appCode>' (item-keys.ts)
 *   leases     map holder id -> lease expiry (epoch ms): one slot per function environment holding one
 *   m#<start>  tokens granted in the minute window that starts at <start> (likewise h#, d#)
 *   u#<start>  tokens environments reported unspent in that minute window
 *   expiresAt  epoch seconds after which nothing in the item matters any more (DynamoDB TTL may tidy up)
 *
 * Size: the lease map never holds more than `concurrent` entries (a lease is added only with room), each about
 * 17 bytes (8-character id, 13-digit expiry); with the default limit of 10 and a handful of counters of about
 * 23 bytes the item is about 400 bytes, and it stays under 1 KB (1 WCU a write) up to about 40 in flight.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { QuotaImage, QuotaWrite } from '../quota/quota-image';
import { LIMIT_OF_WINDOW } from '../quota/rate-limit';
import { parseWindowAttribute, WINDOW_LENGTH_MS } from '../quota/windows';
import { quotaPartitionKey } from './item-keys';

export const QuotaAttr = {
  partitionKey: 'pk',
  leases: 'leases',
  expiresAt: 'expiresAt',
} as const;

/** The stored name of a minute window's unspent tally: `u#…` beside its counter `m#…`. */
export function unspentAttribute(minute: string): string {
  return `u${minute.slice(1)}`;
}

/** Read a quota item from plain attributes (`plainAttributes` of what the store returns). */
export function decodeQuotaItem(attributes: Record<string, unknown> | undefined): QuotaImage | undefined {
  if (!attributes) return undefined;
  const item: QuotaImage = { counters: {}, unspent: {} };
  const leases = attributes[QuotaAttr.leases];
  if (leases !== null && typeof leases === 'object' && !Array.isArray(leases)) {
    item.leases = {};
    for (const [id, expiry] of Object.entries(leases)) if (typeof expiry === 'number') item.leases[id] = expiry;
  }
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value !== 'number') continue;
    if (parseWindowAttribute(name)) item.counters[name] = value;
    else if (name.startsWith('u#') && parseWindowAttribute(`m${name.slice(1)}`))
      item.unspent[`m${name.slice(1)}`] = value;
  }
  return item;
}

/**
 * Plain attributes from DynamoDB's wire format: the item an update returns, or a ConditionalCheckFailedException
 * carries. Only the types a quota item holds (S, N, M) are kept.
 */
export function plainAttributes(raw: Record<string, unknown>): Record<string, unknown> {
  const plain: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    const converted = plainValue(value);
    if (converted !== undefined) plain[name] = converted;
  }
  return plain;
}

/**
 * DynamoDB's wire format of the values the quota store sends (numbers, strings and the empty lease map): the
 * store talks to the low-level client, so that its writes skip the document client's generic translation.
 */
export function wireAttributes(plain: Record<string, unknown>): Record<string, AttributeValue> {
  const wire: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(plain)) wire[name] = wireValue(value);
  return wire;
}

function wireValue(value: unknown): AttributeValue {
  if (typeof value === 'number') return { N: String(value) };
  if (typeof value === 'string') return { S: value };
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return { M: wireAttributes(value as Record<string, unknown>) };
  }
  throw new TypeError(`a quota item holds numbers, strings and maps, not ${typeof value}`);
}

function plainValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return undefined;
  const typed = value as { S?: unknown; N?: unknown; M?: unknown };
  if (typeof typed.S === 'string') return typed.S;
  if (typeof typed.N === 'string') return Number(typed.N);
  if (typed.M !== null && typeof typed.M === 'object') return plainAttributes(typed.M as Record<string, unknown>);
  return undefined;
}

export interface UpdateExpressionParts {
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

/**
 * The UpdateItem of a `QuotaWrite`: its condition is `writeHolds`, its update `applyWrite` (quota-image.ts).
 *
 * The expressions are written in the forms that cost a store least to parse, with the same meaning: `NOT #w >= :r`
 * holds when the counter is absent (a comparison with a missing attribute is false) or under `:r`, i.e.
 * `attribute_not_exists(#w) OR #w < :r` without the parenthesised OR, which dynalite's parser takes about ten
 * times longer over; `ADD #w :k` starts an absent counter at k.
 */
export function writeExpression(write: QuotaWrite): UpdateExpressionParts {
  const names: Record<string, string> = { '#leases': QuotaAttr.leases, '#me': write.holder, '#ttl': 'expiresAt' };
  const values: Record<string, unknown> = { ':expiry': write.expiry };
  const conditions: string[] = ['attribute_exists(#leases)'];
  const sets: string[] = ['#leases.#me = :expiry'];
  const adds: string[] = [];
  const removes: string[] = [];

  // Per window: the tokens taken, less those given back (one ADD per attribute: DynamoDB refuses two).
  write.windows.forEach((window, k) => {
    const delta = write.take - (write.returned[window.attribute] ?? 0);
    // DynamoDB refuses a name the expressions do not use.
    if (write.take > 0 || delta !== 0) names[`#w${k}`] = window.attribute;
    if (write.take > 0) {
      // counter + delta <= limit, i.e. NOT counter >= limit - delta + 1
      values[`:r${k}`] = write.quota[LIMIT_OF_WINDOW[window.kind]] - delta + 1;
      conditions.push(`NOT #w${k} >= :r${k}`);
    }
    if (delta !== 0) {
      values[`:d${k}`] = delta;
      adds.push(`#w${k} :d${k}`);
    }
  });
  const asserted = Object.entries(write.asserted);
  if (write.renewFrom !== undefined) {
    values[':from'] = write.renewFrom;
    conditions.push('#leases.#me = :from');
  } else {
    values[':room'] = write.quota.concurrent + asserted.length;
    conditions.push('size(#leases) < :room');
  }
  asserted.forEach(([id, expiry], k) => {
    names[`#a${k}`] = id;
    values[`:a${k}`] = expiry;
    conditions.push(`#leases.#a${k} = :a${k}`);
    removes.push(`#leases.#a${k}`);
  });
  if (write.unspentDelta !== 0) {
    const minute = write.windows.find((window) => window.kind === 'minute');
    names['#u'] = unspentAttribute(minute?.attribute ?? '');
    values[':delta'] = write.unspentDelta;
    adds.push('#u :delta');
    if (write.unspentDelta > 0) {
      values[':ur'] = write.unspentCap - write.unspentDelta + 1;
      conditions.push('NOT #u >= :ur');
    }
  }
  const current = new Set(write.windows.map((window) => window.attribute));
  write.purge
    .filter((name) => !current.has(name))
    .forEach((name, k) => {
      names[`#s${k}`] = name;
      removes.push(`#s${k}`);
      if (name.startsWith('m#')) {
        names[`#t${k}`] = unspentAttribute(name);
        removes.push(`#t${k}`);
      }
    });
  // Nothing in the item matters after the day window ends and the last lease expires; TTL may then delete it.
  const dayEnd = Math.max(...write.windows.map((window) => window.end));
  values[':ttl'] = Math.ceil((dayEnd + WINDOW_LENGTH_MS.day) / 1000);
  sets.push('#ttl = :ttl');

  return {
    UpdateExpression: `SET ${sets.join(', ')}${adds.length ? ` ADD ${adds.join(', ')}` : ''}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * Write units a failed conditional write is charged: DynamoDB bills it by the item's size (1 unit per KB) but
 * reports nothing, so the request's meter estimates it from the item it saw. Numbers count as their digits'
 * storage (about one byte per two digits plus one), map entries as name, value and a byte of overhead.
 */
export function estimateWriteUnits(appCode: string, item: QuotaImage | undefined): number {
  return Math.max(1, Math.ceil(estimateItemBytes(appCode, item) / 1024));
}

/** The stored size of a quota item, in bytes, by DynamoDB's rules (as `estimateWriteUnits` describes). */
export function estimateItemBytes(appCode: string, item: QuotaImage | undefined): number {
  if (!item) return 0;
  const numberBytes = (value: number) => Math.ceil(String(Math.abs(value)).length / 2) + 1;
  let bytes = QuotaAttr.partitionKey.length + quotaPartitionKey(appCode).length;
  bytes += QuotaAttr.expiresAt.length + 6;
  for (const [name, count] of Object.entries(item.counters)) bytes += name.length + numberBytes(count);
  for (const [name, count] of Object.entries(item.unspent)) bytes += name.length + numberBytes(count);
  if (item.leases) {
    bytes += QuotaAttr.leases.length + 3;
    for (const [id, expiry] of Object.entries(item.leases)) bytes += id.length + numberBytes(expiry) + 1;
  }
  return bytes;
}
