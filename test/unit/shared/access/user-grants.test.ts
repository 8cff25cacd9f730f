/** How a user's grants narrow the application's (docs/interface.md §14): an intersection, never wider. */
import fc from 'fast-check';
import { narrowGrant } from '../../../../shared/access/user-grants';
import type { GrantConfig } from '../../../../shared/catalog/schema';

describe('narrowed grants', () => {
  const app: GrantConfig = {
    datasetCode: 'orders',
    operations: ['read', 'update'],
    readFields: ['customer', 'status', 'region'],
    writeFields: ['status'],
    rowFilter: { region: 'EU' },
  };

  it('are the intersection with the application’s grant, row filters combined', () => {
    expect(
      narrowGrant(app, {
        datasetCode: 'orders',
        operations: ['read'],
        readFields: ['status'],
        rowFilter: { status: 'new' },
      }),
    ).toEqual({
      datasetCode: 'orders',
      operations: ['read'],
      readFields: ['status'],
      writeFields: ['status'],
      rowFilter: { status: 'new', region: 'EU' },
    });
    expect(narrowGrant(app, { datasetCode: 'orders', operations: ['read', 'update'] })).toEqual(app);
    expect(narrowGrant(undefined, { datasetCode: 'orders', operations: ['read'] })).toBeUndefined();
  });

  it('never reach beyond the application’s grant (property)', () => {
    const fields = fc.subarray(['customer', 'status', 'region', 'amount']);
    fc.assert(
      fc.property(
        fc.subarray(['read', 'create', 'update'] as const, { minLength: 1 }),
        fc.option(fields, { nil: undefined }),
        fc.option(fields, { nil: undefined }),
        (operations, readFields, writeFields) => {
          const grant = narrowGrant(app, {
            datasetCode: 'orders',
            operations,
            ...(readFields ? { readFields } : {}),
            ...(writeFields ? { writeFields } : {}),
          }) as GrantConfig;
          for (const operation of grant.operations) expect(app.operations).toContain(operation);
          for (const name of grant.readFields ?? []) expect(app.readFields).toContain(name);
          for (const name of grant.writeFields ?? []) expect(app.writeFields).toContain(name);
          expect(grant.readFields).toBeDefined();
          expect(grant.rowFilter).toMatchObject({ region: 'EU' });
        },
      ),
    );
  });
});
