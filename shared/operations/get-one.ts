/** get-one: one record by id (contract §4). */
import { DataNotFoundError } from '../http/errors';
import { matchesFilter } from '../records/filter-matcher';
import { toApiRecord } from '../records/record-codec';
import { rowScope, visibleFields } from './grant-scope';
import { dataContext, type Operation } from './operation';
import { readParamMap, readRecordId } from './param-map';

export const getOneOperation: Operation = {
  name: 'get-one',
  readsBesideAdmission: true,
  async run(context, body) {
    const { dataset, grant, ports, capacity } = dataContext(context);
    const id = readRecordId(readParamMap(body));
    const item = await ports.records.get(dataset.datasetCode, id, capacity);
    const scope = rowScope(grant, dataset);
    // A row outside the caller's row filter is not found: its existence is not revealed.
    if (!item || (scope && !matchesFilter(item, scope)))
      throw new DataNotFoundError(`record '${id}' not found in dataset '${dataset.datasetCode}'`);
    return toApiRecord(dataset, item, visibleFields(grant));
  },
};
