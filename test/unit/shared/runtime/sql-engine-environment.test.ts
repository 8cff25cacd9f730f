/** docs/interface.md §20, docs/deploying.md: a deployment names its SQL engine in the environment, read once and checked. */
import { readEnvironment } from '../../../../shared/runtime/environment';

const BASE = { RECORDS_TABLE: 'r', CATALOG_TABLE: 'c', QUOTA_TABLE: 'q', KEY_STORE: 'file', KEY_FILE: 'keys.json' };
const AURORA = {
  SQL_ENGINE: 'aurora',
  SQL_CLUSTER_ARN: 'arn:aws:rds:eu-west-1:123456789012:cluster:das-mirror',
  SQL_DATABASE: 'das_mirror',
  SQL_QUERY_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:query',
  SQL_WRITER_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:writer',
};

describe('the SQL engine of a deployment', () => {
  it('is the embedded engine without SQL_ENGINE or with SQL_ENGINE=embedded', () => {
    expect(readEnvironment(BASE).sqlEngine).toBeUndefined();
    expect(readEnvironment({ ...BASE, SQL_ENGINE: 'embedded' }).sqlEngine).toBeUndefined();
  });

  it('is Aurora MySQL through the Data API with SQL_ENGINE=aurora and its four settings', () => {
    expect(readEnvironment({ ...BASE, ...AURORA }).sqlEngine).toEqual({
      clusterArn: 'arn:aws:rds:eu-west-1:123456789012:cluster:das-mirror',
      database: 'das_mirror',
      querySecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:query',
      writerSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:writer',
    });
  });

  it('names what is missing or wrong', () => {
    expect(() => readEnvironment({ ...BASE, ...AURORA, SQL_QUERY_SECRET_ARN: '' })).toThrow(
      "environment variable SQL_QUERY_SECRET_ARN is required (the query user's secret ARN, for SQL_ENGINE=aurora)",
    );
    expect(() => readEnvironment({ ...BASE, SQL_ENGINE: 'mysql' })).toThrow(
      "environment variable SQL_ENGINE is required ('aurora' or 'embedded', not 'mysql')",
    );
  });
});
