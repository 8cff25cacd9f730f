/** update: a partial update of one record, atomic and without a read-modify-write (docs/interface.md §4). */
import { assertWritable, rowScope, updateScopeCondition, visibleFields } from '../access/permissions';
import { recordDatasetWrite } from '../changes/change-log';
import { DataNotFoundError, InvalidParameterError } from '../contract/errors';
import { dataContext, type Operation } from '../operation/operation';
import { readParamMap, readRecordId } from '../operation/param-map';
import { toApiRecord, validateChanges } from '../records/record-codec';
import { formatTimestamp } from '../records/timestamps';
import { withDerivedAttributes } from '../storage/index-attributes';

export const updateOperation: Operation = {
  name: 'update',
  async run(context, body) {
    const { dataset, grant, caller, ports, telemetry, catalog, now } = dataContext(context);
    const appCode = caller.application.appCode;
    const params = readParamMap(body);
    const id = readRecordId(params);
    const changes = validateChanges(dataset, params, 'update', visibleFields(grant));
    if (Object.keys(changes.set).length === 0 && changes.remove.length === 0) {
      throw new InvalidParameterError('nothing to update: send at least one dataset field besides id');
    }
    assertWritable(grant, changes, appCode, dataset.datasetCode);
    const modifiedAt = formatTimestamp(new Date(now()), catalog.timeZone);
    // Index keys and lower-cased shadows change in the same UpdateItem as the fields they derive from.
    const derived = withDerivedAttributes(dataset, id, changes, 'update');
    const condition = updateScopeCondition(
      rowScope(grant, dataset),
      { ...derived.set, gmt_modified: modifiedAt },
      new Set([...Object.keys(changes.set), ...changes.remove, 'gmt_modified']),
      appCode,
      dataset.datasetCode,
    );
    // Not found covers a row outside the caller's scope too: its existence is not revealed.
    const item = await ports.records.update(
      dataset.datasetCode,
      id,
      derived,
      modifiedAt,
      telemetry.capacity,
      condition,
    );
    if (!item) throw new DataNotFoundError(`record '${id}' not found in dataset '${dataset.datasetCode}'`);
    await recordDatasetWrite(dataContext(context), [id]);
    return toApiRecord(dataset, item, visibleFields(grant));
  },
};
