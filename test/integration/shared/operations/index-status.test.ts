/**
 * docs/interface.md §17 over HTTP: `POST /openapi/data/indexes` answers the indexes of the datasets the caller may
 * read, seen through its grant (a field its readFields hide has, to it, no index), and refuses an unknown
 * dataset (1005) or one it may not read (1006). Builds in progress are shown by the live-configuration suite.
 */
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expectFailure } from '../../../support/failure-envelope';
import { type AppCredentials, ServiceHarness } from '../../../support/service-harness';

const APP: AppCredentials = { appCode: 'app-status', accessKey: 'ak-status-application', secret: 'sk-status-secret' };
const OWNER: AppCredentials = { appCode: 'app-owner', accessKey: 'ak-owner-application', secret: 'sk-owner-secret' };

const config = {
  applications: [
    {
      appCode: APP.appCode,
      accessKey: APP.accessKey,
      signingSecret: APP.secret,
      grants: [{ datasetCode: 'orders', operations: ['read'], readFields: ['customer', 'amount'] }],
    },
    {
      appCode: OWNER.appCode,
      accessKey: OWNER.accessKey,
      signingSecret: OWNER.secret,
      grants: [
        { datasetCode: 'orders', operations: ['read', 'create'] },
        { datasetCode: 'ledger', operations: ['read'] },
      ],
    },
  ],
  datasets: [
    {
      appCode: OWNER.appCode,
      datasetCode: 'orders',
      fields: [
        { name: 'customer', type: 'string', indexed: true },
        { name: 'amount', type: 'number' },
        { name: 'margin', type: 'number', indexed: true },
      ],
    },
    { appCode: OWNER.appCode, datasetCode: 'ledger', fields: [{ name: 'entry', type: 'string', indexed: true }] },
  ],
};

const configFile = path.join(os.tmpdir(), `index-status-${process.pid}.json`);
writeFileSync(configFile, JSON.stringify(config));
const harness = new ServiceHarness(configFile);

beforeAll(() => harness.start());
afterAll(async () => {
  await harness.stop();
  rmSync(configFile, { force: true });
});

const TIMESTAMP = expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
const complete = (field: string) => ({
  field,
  state: 'complete',
  percent: 100,
  recordsDone: null,
  recordsTotal: null,
  startedAt: null,
  finishedAt: TIMESTAMP,
});

describe('POST /openapi/data/indexes', () => {
  it('lists the indexes of every dataset the caller may read, complete at once on a store that held none of the datasets', async () => {
    const owner = await harness.call(
      '/openapi/data/indexes',
      { appCode: OWNER.appCode },
      { app: OWNER, datasetCode: null },
    );
    expect(owner.status).toBe(200);
    expect(owner.body.data).toEqual({
      datasets: [
        { datasetCode: 'orders', indexes: [complete('customer'), complete('margin')] },
        { datasetCode: 'ledger', indexes: [complete('entry')] },
      ],
    });
  });

  it('shows no index of a field the grant hides, and no dataset the caller may not read', async () => {
    const answer = await harness.call(
      '/openapi/data/indexes',
      { appCode: APP.appCode },
      { app: APP, datasetCode: null },
    );
    expect(answer.body.data).toEqual({ datasets: [{ datasetCode: 'orders', indexes: [complete('customer')] }] });
    const one = await harness.call(
      '/openapi/data/indexes',
      { appCode: APP.appCode, datasetCode: 'orders' },
      { app: APP },
    );
    expect(one.body.data).toEqual(answer.body.data);
  });

  it('answers 1005 for a dataset that does not exist and 1006 for one the caller may not read', async () => {
    expectFailure(
      await harness.call('/openapi/data/indexes', { appCode: APP.appCode, datasetCode: 'invoices' }, { app: APP }),
      1005,
    );
    expectFailure(
      await harness.call('/openapi/data/indexes', { appCode: APP.appCode, datasetCode: 'ledger' }, { app: APP }),
      1006,
    );
  });
});
