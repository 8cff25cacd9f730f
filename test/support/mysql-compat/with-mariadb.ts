/**
 * Test suites that need a MariaDB server (Debian's `mariadb-server`; .ci/run installs it). Where it is not
 * installed the suite is replaced by one test that says so: it fails under CI (which must run them) and passes
 * elsewhere with a warning, so a laptop without MariaDB still runs the rest of the tests.
 */
import { mariaDbInstalled } from './mariadb';

export function describeWithMariaDb(name: string, suite: () => void): void {
  if (mariaDbInstalled()) {
    describe(name, suite);
    return;
  }
  describe(name, () => {
    it('needs MariaDB (apt-get install mariadb-server): not installed here, so these tests did not run', () => {
      console.warn(`${name}: MariaDB is not installed (/usr/sbin/mariadbd); these tests did not run`);
      expect(process.env.CI ?? '').toBe('');
    });
  });
}
