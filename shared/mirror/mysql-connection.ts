/**
 * The MySQL protocol's way to the mirror (`npm start -- --sql-engine mysql://…`, docs/interface.md §20), through
 * `mysql2`: only the local server loads this file, so no function's bundle carries the driver.
 *
 * `mysql://user:password@host:port/db` names the mirror's writer: it makes the database's tables and writes them.
 * Queries run as a second user that may only SELECT the mirror's tables: `?queryUser=…&queryPassword=…` names
 * one the operator made; without them the writer makes `das_query` (a fresh random password each start) and
 * grants it SELECT on each mirror table as the table is made. `?socketPath=/path/mysqld.sock` connects over a
 * Unix socket instead of TCP.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { quoteName } from '../sql-dialect/mysql-render';
import type { SqlSession } from './mirror-tables';

export interface MysqlTarget {
  user: string;
  password: string;
  host?: string;
  port?: number;
  socketPath?: string;
  database: string;
  queryUser?: { user: string; password: string };
}

/** A query's session as MySQL 8's defaults set it, whatever the server's own (MariaDB's differ). */
export const QUERY_SESSION = [
  "SET SESSION sql_mode = 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
  'SET SESSION group_concat_max_len = 1024',
];
/** The writer stores values as they are: a value a column cannot take must not stop the mirror for good. */
const WRITER_SESSION = ["SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'"];

/** Reads `mysql://user:password@host:port/db[?socketPath=…&queryUser=…&queryPassword=…]`; throws saying what is wrong. */
export function parseMysqlUrl(text: string): MysqlTarget {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`--sql-engine must be embedded or mysql://user:password@host:port/db, not ${text}`);
  }
  if (url.protocol !== 'mysql:') {
    throw new Error(`--sql-engine must be embedded or mysql://user:password@host:port/db, not ${url.protocol} ...`);
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]{1,64}$/.test(database)) {
    throw new Error('--sql-engine mysql://…/db: name the database (letters, digits and _) after the host');
  }
  if (!url.username) throw new Error('--sql-engine mysql://user:password@…: name the user');
  const socketPath = url.searchParams.get('socketPath') ?? undefined;
  const queryUser = url.searchParams.get('queryUser');
  const queryPassword = url.searchParams.get('queryPassword');
  if ((queryUser === null) !== (queryPassword === null)) {
    throw new Error('--sql-engine mysql://…?queryUser=…&queryPassword=…: give both or neither');
  }
  return {
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    ...(socketPath ? { socketPath } : { host: url.hostname || 'localhost', port: Number(url.port || 3306) }),
    database,
    ...(queryUser !== null ? { queryUser: { user: queryUser, password: queryPassword ?? '' } } : {}),
  };
}

/** The target with its password hidden, for messages and logs. */
export function describeTarget(target: MysqlTarget): string {
  const where = target.socketPath ? `socket ${target.socketPath}` : `${target.host}:${target.port}`;
  return `mysql://${target.user}@${where}/${target.database}`;
}

export function poolOf(
  target: MysqlTarget,
  user: { user: string; password: string },
  options: { database?: boolean; connectionLimit: number; init: readonly string[] },
): mysql.Pool {
  const pool = mysql.createPool({
    ...(target.socketPath ? { socketPath: target.socketPath } : { host: target.host, port: target.port }),
    user: user.user,
    password: user.password,
    ...(options.database === false ? {} : { database: target.database }),
    connectionLimit: options.connectionLimit,
    charset: 'utf8mb4',
    dateStrings: true,
    decimalNumbers: true,
    supportBigNumbers: true,
    jsonStrings: true,
    multipleStatements: false,
    timezone: 'Z',
  });
  pool.on('connection', (connection) => {
    for (const statement of options.init) connection.query(statement);
  });
  return pool;
}

export function sessionOf(pool: mysql.Pool): SqlSession {
  return {
    async execute(sql, values) {
      const [rows] = await pool.query(sql, values as unknown[] | undefined);
      return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
    },
  };
}

export interface MysqlMirrorConnections {
  target: MysqlTarget;
  writer: mysql.Pool;
  reader: mysql.Pool;
  /** The query user's connection that cancels statements (`KILL QUERY`): never queued behind the queries. */
  killer: mysql.Pool;
  /** Grants the query user SELECT on a table the writer made (nothing when the operator manages that user). */
  grantRead(table: string): Promise<void>;
  close(): Promise<void>;
}

const QUERY_USER = 'das_query';

/**
 * Connects as the writer, makes the database if it is missing, and sets up the query user. Throws an error
 * that says what to change when the server cannot be reached or the writer may not do that.
 */
export async function connectMysql(target: MysqlTarget): Promise<MysqlMirrorConnections> {
  const admin = poolOf(target, target, { database: false, connectionLimit: 1, init: WRITER_SESSION });
  try {
    await admin.query(`CREATE DATABASE IF NOT EXISTS ${quoteName(target.database)} CHARACTER SET utf8mb4`);
  } catch (error) {
    await admin.end();
    throw new Error(`cannot use the MySQL engine at ${describeTarget(target)}: ${(error as Error).message}`);
  }
  let queryUser = target.queryUser;
  const hosts = target.socketPath ? ['localhost'] : ['%', 'localhost'];
  if (!queryUser) {
    queryUser = { user: QUERY_USER, password: randomBytes(18).toString('base64url') };
    try {
      for (const host of hosts) {
        await admin.query('CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ?', [queryUser.user, host, queryUser.password]);
        await admin.query('ALTER USER ?@? IDENTIFIED BY ?', [queryUser.user, host, queryUser.password]);
      }
    } catch (error) {
      await admin.end();
      throw new Error(
        `the MySQL user ${target.user} may not create the query user ${QUERY_USER} (${(error as Error).message}): ` +
          'give it CREATE USER, or name a user that may only SELECT with ?queryUser=…&queryPassword=…',
      );
    }
  }
  await admin.end();
  const writer = poolOf(target, target, { connectionLimit: 4, init: WRITER_SESSION });
  const reader = poolOf(target, queryUser, { connectionLimit: 10, init: QUERY_SESSION });
  const killer = poolOf(target, queryUser, { connectionLimit: 2, init: [] });
  const managed = target.queryUser === undefined;
  return {
    target,
    writer,
    reader,
    killer,
    async grantRead(table) {
      if (!managed) return;
      for (const host of hosts) {
        await writer.query(`GRANT SELECT ON ${quoteName(target.database)}.${quoteName(table)} TO ?@?`, [
          QUERY_USER,
          host,
        ]);
      }
    },
    async close() {
      await Promise.allSettled([writer.end(), reader.end(), killer.end()]);
    },
  };
}
