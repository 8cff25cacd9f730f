/**
 * Questions a configuration change asks about the records a dataset holds (catalog-store/configuration-change.ts):
 * whether it holds any, how many, and which of some values a field still holds. Answered with as little reading as
 * the store allows: one key of the partition; the record counter; for values, one key per value from the field's
 * complete index when it has one, else the partition read through a filter that stops as soon as every value was
 * seen (at worst the whole dataset: about 0.5 read units per 4 KB of records, once per change that removes an enum
 * option of an unindexed field).
 */
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { IndexRegistry } from '../catalog/index-registry';
import { CapacityMeter } from '../observability/capacity-meter';
import { equalityInterval } from '../records/value-encoding';
import { DatasetBookkeeping } from './dataset-bookkeeping';
import { indexSlot } from './index-attributes';
import { datasetPartitionKey } from './item-keys';
import { estimateRecordCount } from './record-counter';
import { RecordAttr } from './table-definitions';

export class DatasetProbes {
  private readonly bookkeeping: DatasetBookkeeping;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly recordsTable: string,
    /** What the probes consumed, for whoever reports it. */
    readonly meter: CapacityMeter = new CapacityMeter(),
  ) {
    this.bookkeeping = new DatasetBookkeeping(client, recordsTable);
  }

  async hasRecords(datasetCode: string): Promise<boolean> {
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.recordsTable,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey },
        ExpressionAttributeValues: { ':pk': datasetPartitionKey(datasetCode) },
        ProjectionExpression: '#pk',
        Limit: 1,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    this.meter.addRead(result.ConsumedCapacity);
    return (result.Items?.length ?? 0) > 0;
  }

  recordCount(datasetCode: string): Promise<number> {
    return estimateRecordCount(this.bookkeeping, datasetCode, this.meter);
  }

  async usedValues(
    datasetCode: string,
    field: string,
    values: readonly string[],
    registry: IndexRegistry,
  ): Promise<string[]> {
    const index = registry[datasetCode]?.indexes.find(
      (candidate) => candidate.field === field && candidate.state === 'complete' && candidate.slot !== undefined,
    );
    if (index?.slot !== undefined) {
      const slot = indexSlot({ field, slot: index.slot, build: index.build });
      const found = await Promise.all(
        values.map(async (value) => {
          const { interval } = equalityInterval(value);
          const result = await this.client.send(
            new QueryCommand({
              TableName: this.recordsTable,
              IndexName: slot.indexName,
              KeyConditionExpression: '#pk = :pk AND #ix BETWEEN :lower AND :upper',
              ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#ix': slot.attribute },
              ExpressionAttributeValues: {
                ':pk': datasetPartitionKey(datasetCode),
                ':lower': slot.tag + interval.lower,
                ':upper': slot.tag + interval.upper,
              },
              Limit: 1,
              ReturnConsumedCapacity: 'TOTAL',
            }),
          );
          this.meter.addRead(result.ConsumedCapacity);
          return (result.Items?.length ?? 0) > 0 ? [value] : [];
        }),
      );
      return found.flat();
    }
    // The partition through a filter, page by page, keeping nothing but which values were seen.
    const seen = new Set<string>();
    let startKey: Record<string, unknown> | undefined;
    do {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.recordsTable,
          KeyConditionExpression: '#pk = :pk',
          FilterExpression: `#f IN (${values.map((_, i) => `:v${i}`).join(', ')})`,
          ProjectionExpression: '#f',
          ExpressionAttributeNames: { '#pk': RecordAttr.partitionKey, '#f': field },
          ExpressionAttributeValues: {
            ':pk': datasetPartitionKey(datasetCode),
            ...Object.fromEntries(values.map((value, i) => [`:v${i}`, value])),
          },
          ExclusiveStartKey: startKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      this.meter.addRead(result.ConsumedCapacity);
      for (const item of result.Items ?? []) if (typeof item[field] === 'string') seen.add(item[field] as string);
      startKey = result.LastEvaluatedKey;
    } while (startKey && seen.size < values.length);
    return values.filter((value) => seen.has(value));
  }
}
