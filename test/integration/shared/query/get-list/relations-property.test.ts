/**
 * Property: get-list with related fields answers as an in-memory join of the same records
 * (test/support/relations-property.ts), on the embedded setup within the read budget.
 */
import path from 'node:path';
import { FIXTURES_DIR } from '../../../../support/paths';
import { relationsProperty } from '../../../../support/relations-property';
import { ServiceHarness } from '../../../../support/service-harness';

const harness = new ServiceHarness(path.join(FIXTURES_DIR, 'relations-config.json'));

beforeAll(() => harness.start(), 60_000);
afterAll(() => harness.stop());

relationsProperty(() => harness, { numRuns: 40, tag: 'r' });
