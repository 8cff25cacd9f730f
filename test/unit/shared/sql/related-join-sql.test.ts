/**
 * The statement a related list runs on MySQL past the read budget (docs/interface.md §21, shared/sql/related-join-sql.ts):
 * what the caller may not read is no column of it and no row of it, by construction. app-narrow reads customers'
 * `name` and `region` of the north only (test/fixtures/relations-config.json).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { applicationCaller } from '../../../../shared/access/caller';
import { Catalog, type Dataset } from '../../../../shared/catalog/catalog';
import { parseConfig } from '../../../../shared/catalog-store/load-config';
import { parseListParams } from '../../../../shared/query/list-params';
import { relatedScopes } from '../../../../shared/query/related-scopes';
import { relatedJoinStatements } from '../../../../shared/sql/related-join-sql';
import { FIXTURES_DIR } from '../../../support/paths';

const catalog = new Catalog(
  parseConfig(JSON.parse(readFileSync(path.join(FIXTURES_DIR, 'relations-config.json'), 'utf8'))),
);
const orders = catalog.dataset('orders') as Dataset;

function statements(appCode: string, params: Record<string, unknown>) {
  const application = catalog.application(appCode);
  if (!application) throw new Error(`no application ${appCode}`);
  const caller = applicationCaller(application);
  const related = relatedScopes(catalog, caller, orders);
  const parsed = parseListParams(params, orders, { related: related.access });
  return relatedJoinStatements('mirror', caller, {
    dataset: orders,
    filter: parsed.filter,
    sort: parsed.sort,
    offset: 20,
    limit: 10,
    scopes: related.scopes,
  });
}

describe('a related list as MySQL text', () => {
  it("reads the related table through the SELECT of the caller's columns and rows, and waits for both mirrors", () => {
    const { page, count, datasets } = statements('app-narrow', {
      where: { 'customer.name': { $startWith: 'a' } },
      orderBy: [{ 'customer.region': 'desc' }],
    });
    expect(datasets).toEqual(['orders', 'customers']);
    expect(page).toContain(
      "LEFT JOIN (SELECT `id`, `name`, `region`, `gmt_create`, `gmt_modified` FROM `mirror`.`customers` WHERE CAST(`region` AS BINARY) = X'6e6f727468') AS `r0`",
    );
    expect(page).not.toMatch(/`(tier|email)`/);
    expect(page).toContain(
      'ORDER BY CAST(j.`customer.region` AS BINARY) DESC, CAST(j.`id` AS BINARY) DESC LIMIT 10 OFFSET 20',
    );
    // A related condition holds only where the caller may read a related record.
    expect(page).toContain(
      "WHERE (`customer.id` IS NOT NULL AND (`customer.name` IS NOT NULL AND LEFT(CAST(LOWER(`customer.name`) AS BINARY), 1) = X'61'))",
    );
    expect(count).not.toContain('LIMIT');
  });

  it('joins on the link byte for byte, and shows every column of a grant without readFields', () => {
    const { page } = statements('app-main', { where: { 'customer.tier': 'gold' } });
    expect(page).toContain(
      'CONVERT(`customer_id` USING utf8mb4) COLLATE utf8mb4_bin AS `das$link0` FROM `mirror`.`orders`) AS t',
    );
    expect(page).toContain('ON `r0`.`id` = t.`das$link0`');
    expect(page).toContain('`r0`.`email` AS `customer.email`');
    // No sort asked: newest first, ties by id.
    expect(page).toContain('ORDER BY j.`gmt_create` DESC, CAST(j.`id` AS BINARY) DESC');
  });
});
