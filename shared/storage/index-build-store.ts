/**
 * The DynamoDB calls of index jobs (shared/indexing/): reading a dataset's records one id range (segment) at a
 * time, writing or removing one record's index keys, and the job's own items in the catalog table (its
 * definition, each segment's position, the records processed per dataset).
 *
 * A record's index keys are written with one UpdateItem on the condition that the fields they were made from
 * still hold the values read, and removed on the condition that the attribute still holds a key of the dropped
 * build: a write that raced the job's read (which already set the right key itself) makes the condition fail,
 * and the job reads the record again instead of putting back a stale key.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { CapacityMeter } from '../observability/capacity-meter';
import type { StoredValue } from '../records/field-values';
import type { RecordItem } from '../records/record-codec';
import { writeInBatches } from './batch-items';
import { conditionalWrite } from './conditional-write';
import { datasetPartitionKey, indexJobKey, indexJobProgressKey, indexJobSegmentKey, recordKey } from './item-keys';
import type { ReadPosition } from './query-pages';
import { RecordAttr } from './table-definitions';

/** Inclusive id bounds of a segment; an absent bound is open. */
export interface IdRange {
  lower?: string;
  upper?: string;
}

export interface IndexKeyWrite {
  /** Index attributes to set, each made from `field` holding `value` (null: absent). */
  set: { attribute: string; key: string; field: string; value: StoredValue | null }[];
  /** Index attributes to remove, each only while it holds a key that starts with `tag`. */
  remove: { attribute: string; tag: string }[];
}

/** Where a segment of a job stands. */
export interface SegmentProgress {
  /** Where to continue reading; absent before the first page and once done. */
  position?: ReadPosition;
  /** Records read so far. */
  processed: number;
  done: boolean;
  /** The per-value totals counted so far, saved with the position so that a page is never counted twice. */
  totals?: SegmentTotalsState;
}

/** A segment's per-value totals: per build number its counts (count key, count), and the builds given up. */
export interface SegmentTotalsState {
  counts: Record<number, [string, number][]>;
  uncounted: number[];
}

export interface IndexBuildTables {
  records: string;
  catalog: string;
}

export class IndexBuildStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: IndexBuildTables,
  ) {}

  /** The smallest record id of a dataset (one key read), or `undefined` when it holds none. */
  async firstRecordId(datasetCode: string, meter: CapacityMeter): Promise<string | undefined> {
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.tables.records,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#sk': RecordAttr.sortKey },
        ExpressionAttributeValues: { ':pk': datasetPartitionKey(datasetCode) },
        ProjectionExpression: '#sk',
        Limit: 1,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    return result.Items?.[0]?.[RecordAttr.sortKey] as string | undefined;
  }

  /**
   * One page of a dataset's records within `range`, in id order, from `startAfter`; `next` when more follow.
   * `consistent`: every write that landed before the read shows (a job counting per-value totals needs it).
   */
  async readRecords(
    datasetCode: string,
    range: IdRange,
    startAfter: ReadPosition | undefined,
    limit: number,
    meter: CapacityMeter,
    consistent = false,
  ): Promise<{ items: RecordItem[]; next?: ReadPosition }> {
    const names: Record<string, string> = { '#pk': RecordAttr.partitionKey };
    const values: Record<string, unknown> = { ':pk': datasetPartitionKey(datasetCode) };
    let condition = '#pk = :pk';
    if (range.lower !== undefined || range.upper !== undefined) names['#sk'] = RecordAttr.sortKey;
    if (range.lower !== undefined && range.upper !== undefined) {
      condition += ' AND #sk BETWEEN :lower AND :upper';
      Object.assign(values, { ':lower': range.lower, ':upper': range.upper });
    } else if (range.lower !== undefined) {
      condition += ' AND #sk >= :lower';
      values[':lower'] = range.lower;
    } else if (range.upper !== undefined) {
      condition += ' AND #sk <= :upper';
      values[':upper'] = range.upper;
    }
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.tables.records,
        KeyConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ExclusiveStartKey: startAfter,
        Limit: limit,
        ...(consistent ? { ConsistentRead: true } : {}),
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    const items = result.Items ?? [];
    return result.LastEvaluatedKey ? { items, next: result.LastEvaluatedKey } : { items };
  }

  /** One record, read consistently (after a conditional write found it changed). */
  async readRecord(datasetCode: string, id: string, meter: CapacityMeter): Promise<RecordItem | undefined> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.tables.records,
        Key: recordKey(datasetCode, id),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter.addRead(result.ConsumedCapacity);
    return result.Item;
  }

  /** Write one record's index keys; `false` when the record changed since it was read (nothing written). */
  async writeIndexKeys(datasetCode: string, id: string, write: IndexKeyWrite, meter: CapacityMeter): Promise<boolean> {
    const names: Record<string, string> = { '#sk': RecordAttr.sortKey };
    const values: Record<string, unknown> = {};
    const sets: string[] = [];
    const conditions = ['attribute_exists(#sk)'];
    write.set.forEach((entry, i) => {
      names[`#a${i}`] = entry.attribute;
      names[`#f${i}`] = entry.field;
      values[`:k${i}`] = entry.key;
      sets.push(`#a${i} = :k${i}`);
      if (entry.value === null) conditions.push(`attribute_not_exists(#f${i})`);
      else {
        values[`:v${i}`] = entry.value;
        conditions.push(`#f${i} = :v${i}`);
      }
    });
    const removes: string[] = [];
    write.remove.forEach((entry, i) => {
      names[`#r${i}`] = entry.attribute;
      values[`:t${i}`] = entry.tag;
      removes.push(`#r${i}`);
      conditions.push(`begins_with(#r${i}, :t${i})`);
    });
    const update = [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : '']
      .filter(Boolean)
      .join(' ');
    const result = await conditionalWrite(meter, () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tables.records,
          Key: recordKey(datasetCode, id),
          UpdateExpression: update,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    return result !== undefined;
  }

  /** Store a job's definition (once, when the job is created). */
  async putJob(jobId: string, definition: Record<string, unknown>): Promise<void> {
    await this.client.send(
      new PutCommand({ TableName: this.tables.catalog, Item: { ...indexJobKey(jobId), definition } }),
    );
  }

  /** A job's definition; `undefined` when it was never stored or is gone. */
  async readJob(jobId: string): Promise<unknown> {
    const result = await this.client.send(
      new GetCommand({ TableName: this.tables.catalog, Key: indexJobKey(jobId), ConsistentRead: true }),
    );
    return result.Item?.definition;
  }

  async readSegment(jobId: string, datasetCode: string, segment: number): Promise<SegmentProgress | undefined> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.tables.catalog,
        Key: indexJobSegmentKey(jobId, datasetCode, segment),
        ConsistentRead: true,
      }),
    );
    const item = result.Item;
    if (!item) return undefined;
    return {
      ...(item.position ? { position: item.position as ReadPosition } : {}),
      processed: typeof item.processed === 'number' ? item.processed : 0,
      done: item.done === true,
      ...(typeof item.totals === 'string' ? { totals: JSON.parse(item.totals) as SegmentTotalsState } : {}),
    };
  }

  async saveSegment(jobId: string, datasetCode: string, segment: number, progress: SegmentProgress): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tables.catalog,
        Item: {
          ...indexJobSegmentKey(jobId, datasetCode, segment),
          ...progress,
          ...(progress.totals ? { totals: JSON.stringify(progress.totals) } : {}),
        },
      }),
    );
  }

  /** Start counting a dataset's progress in a job: `total` records to process, none yet. */
  async startProgress(jobId: string, datasetCode: string, total: number): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tables.catalog,
        Item: { ...indexJobProgressKey(jobId, datasetCode), total, processed: 0 },
      }),
    );
  }

  /** Count `records` more processed records of a dataset in a job. */
  async addProgress(jobId: string, datasetCode: string, records: number): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tables.catalog,
        Key: indexJobProgressKey(jobId, datasetCode),
        UpdateExpression: 'ADD #processed :n',
        ExpressionAttributeNames: { '#processed': 'processed' },
        ExpressionAttributeValues: { ':n': records },
      }),
    );
  }

  /**
   * How far a job has come with a dataset: records processed (a page done again after a crash counts twice) of
   * the records it held when the job started. Eventually consistent: a progress figure. `undefined` when the job
   * has no such counter (finished and removed, or never started).
   */
  async readProgress(
    jobId: string,
    datasetCode: string,
    meter?: CapacityMeter,
  ): Promise<{ processed: number; total: number } | undefined> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.tables.catalog,
        Key: indexJobProgressKey(jobId, datasetCode),
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    meter?.addRead(result.ConsumedCapacity);
    const item = result.Item;
    if (typeof item?.total !== 'number') return undefined;
    return { processed: typeof item.processed === 'number' ? item.processed : 0, total: item.total };
  }

  /** Remove a finished job's items: its definition, its progress counters and its segments' positions. */
  async deleteJob(jobId: string, segments: readonly { datasetCode: string; segment: number }[]): Promise<void> {
    const keys = [
      indexJobKey(jobId),
      ...[...new Set(segments.map((s) => s.datasetCode))].map((code) => indexJobProgressKey(jobId, code)),
      ...segments.map((s) => indexJobSegmentKey(jobId, s.datasetCode, s.segment)),
    ];
    await writeInBatches(
      this.client,
      this.tables.catalog,
      keys.map((key) => ({ DeleteRequest: { Key: key } })),
      undefined,
    );
  }
}
