/** get-one: one record by id (docs/interface.md §4). */
import { rowInScope, rowScope, visibleFields } from '../access/permissions';
import { DataNotFoundError } from '../contract/errors';
import { dataContext, type Operation } from '../operation/operation';
import { readParamMap, readRecordId } from '../operation/param-map';
import { toApiRecord } from '../records/record-codec';

export const getOneOperation: Operation = {
  name: 'get-one',
  readsBesideAdmission: true,
  async run(context, body) {
    const { dataset, grant, ports, telemetry } = dataContext(context);
    const id = readRecordId(readParamMap(body));
    const item = await ports.records.get(dataset.datasetCode, id, telemetry.capacity);
    // A row outside the caller's row filter is not found: its existence is not revealed.
    if (!item || !rowInScope(rowScope(grant, dataset), item))
      throw new DataNotFoundError(`record '${id}' not found in dataset '${dataset.datasetCode}'`);
    return toApiRecord(dataset, item, visibleFields(grant));
  },
};
