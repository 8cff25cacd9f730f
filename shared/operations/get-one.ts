/** get-one: one record by id (docs/interface.md §4), its revision as the answer's ETag (§18). */
import { rowInScope, rowScope } from '../access/permissions';
import { DataNotFoundError } from '../contract/errors';
import { dataContext, type Operation } from '../operation/operation';
import { readParamMap, readRecordId } from '../operation/param-map';
import { answerRecord } from './record-answer';

export const getOneOperation: Operation = {
  name: 'get-one',
  readsBesideAdmission: true,
  async run(context, body) {
    const data = dataContext(context);
    const { dataset, grant, ports, telemetry } = data;
    const id = readRecordId(readParamMap(body));
    const item = await ports.records.get(dataset.datasetCode, id, telemetry.capacity);
    // A row outside the caller's row filter is not found: its existence is not revealed.
    if (!item || !rowInScope(rowScope(grant, dataset), item))
      throw new DataNotFoundError(`record '${id}' not found in dataset '${dataset.datasetCode}'`);
    return answerRecord(data, item);
  },
};
