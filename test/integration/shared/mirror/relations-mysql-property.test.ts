/**
 * Property: get-list with related fields answers as an in-memory join of the same records
 * (test/support/relations-property.ts) on MySQL (MariaDB): this file's server has a read budget below one read, so
 * every list naming a related field is past it and runs on the mysql engine over the mirror (docs/interface.md §21).
 */
import path from 'node:path';
import { MariaDb } from '../../../support/mysql-compat/mariadb';
import { describeWithMariaDb } from '../../../support/mysql-compat/with-mariadb';
import { FIXTURES_DIR } from '../../../support/paths';
import { relationsProperty } from '../../../support/relations-property';
import { ServiceHarness } from '../../../support/service-harness';

// Read once, when the first request builds the container's ports.
process.env.LIST_READ_BUDGET = '0.1';

describeWithMariaDb('related fields on MySQL past the read budget, against the in-memory join', () => {
  let mariadb: MariaDb;
  let harness: ServiceHarness;

  beforeAll(async () => {
    mariadb = await MariaDb.start('UTC');
    harness = new ServiceHarness(path.join(FIXTURES_DIR, 'relations-config.json'), {
      sources: true,
      sqlEngine: mariadb.engineUrl('mirror'),
    });
    await harness.start();
  }, 120_000);
  afterAll(async () => {
    await harness?.stop();
    await mariadb?.stop();
    delete process.env.LIST_READ_BUDGET;
  });

  relationsProperty(() => harness, { numRuns: 25, relatedOnly: true, tag: 'm' });
});
