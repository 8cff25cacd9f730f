/** create: one new record with generated id and timestamps (docs/interface.md §4). */

import { assertCreateInScope, assertWritable, rowScope, visibleFields } from '../permissions/permissions';
import { withDerivedAttributes } from '../records/index-attributes';
import { itemSize, MAX_RECORD_BYTES, recordTooLargeError, toApiRecord, validateChanges } from '../records/record-codec';
import { newRecordId } from '../records/record-ids';
import { formatTimestamp } from '../records/timestamps';
import { recordDatasetWrite } from './dataset-version';
import { dataContext, type Operation } from './operation';
import { readParamMap } from './param-map';

export const createOperation: Operation = {
  name: 'create',
  async run(context, body) {
    const { dataset, grant, caller, ports, telemetry, catalog, now } = dataContext(context);
    const appCode = caller.application.appCode;
    const changes = validateChanges(dataset, readParamMap(body), 'create', visibleFields(grant));
    assertWritable(grant, changes, appCode, dataset.datasetCode);
    const createdAt = now();
    // The id carries the creation time, so gmt_create and the id's order agree.
    const id = newRecordId(createdAt);
    const timestamp = formatTimestamp(new Date(createdAt), catalog.timeZone);
    // Index keys and lower-cased shadows go into the same PutItem as the fields they derive from.
    const derived = withDerivedAttributes(dataset, id, changes, 'create');
    const fields = { ...derived.set, gmt_create: timestamp, gmt_modified: timestamp };
    if (itemSize(fields) > MAX_RECORD_BYTES) throw recordTooLargeError();
    assertCreateInScope(rowScope(grant, dataset), { ...fields, id }, appCode, dataset.datasetCode);
    const item = await ports.records.create(dataset.datasetCode, id, fields, telemetry.capacity);
    await recordDatasetWrite(dataContext(context), [id]);
    return toApiRecord(dataset, item, visibleFields(grant));
  },
};
