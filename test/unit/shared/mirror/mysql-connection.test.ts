/** docs/interface.md §20: the `--sql-engine` / `DAS_SQL_ENGINE` URL, read or refused with what to write instead. */
import { describeTarget, parseMysqlUrl } from '../../../../shared/mirror/mysql-connection';

describe('the MySQL engine URL', () => {
  it('reads user, password, host, port and database, and hides the password when describing it', () => {
    const target = parseMysqlUrl('mysql://das:s%40cret@db.example:3307/das_mirror');
    expect(target).toEqual({ user: 'das', password: 's@cret', host: 'db.example', port: 3307, database: 'das_mirror' });
    expect(describeTarget(target)).toBe('mysql://das@db.example:3307/das_mirror');
  });

  it('takes port 3306 by default, a Unix socket, and a query user of the operator', () => {
    expect(parseMysqlUrl('mysql://root@localhost/m')).toMatchObject({ host: 'localhost', port: 3306 });
    const socket = parseMysqlUrl(
      'mysql://root@localhost/m?socketPath=%2Ftmp%2Fmysqld.sock&queryUser=q&queryPassword=p',
    );
    expect(socket).toEqual({
      user: 'root',
      password: '',
      socketPath: '/tmp/mysqld.sock',
      database: 'm',
      queryUser: { user: 'q', password: 'p' },
    });
    expect(describeTarget(socket)).toBe('mysql://root@socket /tmp/mysqld.sock/m');
  });

  it('refuses what it cannot use, saying what to write', () => {
    expect(() => parseMysqlUrl('postgres://u@h/db')).toThrow(
      '--sql-engine must be embedded or mysql://user:password@host:port/db, not postgres: ...',
    );
    expect(() => parseMysqlUrl('mysql://u@h')).toThrow('name the database (letters, digits and _) after the host');
    expect(() => parseMysqlUrl('mysql://u@h/my-db')).toThrow('name the database');
    expect(() => parseMysqlUrl('mysql://h:3306/db')).toThrow('name the user');
    expect(() => parseMysqlUrl('mysql://u@h/db?queryUser=q')).toThrow('give both or neither');
    expect(() => parseMysqlUrl('not a url')).toThrow('--sql-engine must be embedded or mysql://');
  });
});
