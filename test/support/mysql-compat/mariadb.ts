/**
 * A throw-away MariaDB server (Debian's `mariadb-server` package) for the compatibility corpus: a fresh data
 * directory, a Unix socket and no network, set up as MySQL 8 is by default where MariaDB can be (utf8mb4 with an
 * accent- and case-insensitive NO PAD collation, ONLY_FULL_GROUP_BY, group_concat_max_len 1024, at most 1000
 * rounds of a recursive WITH query, the configuration's time zone). The corpus's records are loaded into tables whose column types are those a MySQL
 * schema of the datasets has, and each query runs as MyBatis sends it (placeholders bound as values).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import type { DatasetConfig, FieldType } from '../../../shared/catalog/schema';
import type { CorpusQuery } from './corpus';

const SERVER = '/usr/sbin/mariadbd';
const INSTALL = '/usr/bin/mariadb-install-db';
/** MariaDB's nearest to MySQL 8's default utf8mb4_0900_ai_ci: UCA, accent- and case-insensitive, NO PAD. */
export const COLLATION = 'utf8mb4_uca1400_nopad_ai_ci';

const COLUMN_TYPES: Record<FieldType, string> = {
  string: 'VARCHAR(255)',
  text: 'TEXT',
  enum: 'VARCHAR(64)',
  integer: 'BIGINT',
  number: 'DOUBLE',
  boolean: 'TINYINT(1)',
  date: 'DATE',
  datetime: 'DATETIME',
  json: 'JSON',
};

export interface Answer {
  columns: string[];
  rows: unknown[][];
}

export function mariaDbInstalled(): boolean {
  return existsSync(SERVER) && existsSync(INSTALL);
}

export class MariaDb {
  private constructor(
    private readonly dir: string,
    private readonly server: ChildProcess,
    readonly connection: mysql.Connection,
    /** The server's Unix socket (it listens on no network port). */
    readonly socket: string,
  ) {}

  /** A `--sql-engine` URL for a database of this server, as root over its socket. */
  engineUrl(database: string): string {
    return `mysql://root@localhost/${database}?socketPath=${encodeURIComponent(this.socket)}`;
  }

  static async start(timeZone: string): Promise<MariaDb> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mariadb-compat-'));
    const data = path.join(dir, 'data');
    const socket = path.join(dir, 'mysqld.sock');
    const tmp = path.join(dir, 'tmp');
    mkdirSync(tmp);
    const install = spawnSync(
      INSTALL,
      [
        '--no-defaults',
        `--datadir=${data}`,
        '--user=root',
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
      ],
      {
        encoding: 'utf8',
      },
    );
    if (install.status !== 0) throw new Error(`mariadb-install-db failed: ${install.stderr}`);
    const server = spawn(
      SERVER,
      [
        '--no-defaults',
        `--datadir=${data}`,
        `--socket=${socket}`,
        '--skip-networking',
        '--user=root',
        `--pid-file=${path.join(dir, 'mysqld.pid')}`,
        '--character-set-server=utf8mb4',
        `--collation-server=${COLLATION}`,
        '--innodb-buffer-pool-size=32M',
        // Its temporary tables in its own folder: files in the machine's /tmp may be removed by others' clean-ups
        // while a query uses them (MariaDB then fails it with error 6).
        `--tmpdir=${tmp}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log = '';
    server.stderr?.on('data', (chunk) => {
      log += String(chunk);
    });
    const deadline = Date.now() + 60_000;
    let connection: mysql.Connection | undefined;
    while (!connection) {
      if (server.exitCode !== null) throw new Error(`mariadbd stopped: ${log}`);
      try {
        connection = await mysql.createConnection({
          socketPath: socket,
          user: 'root',
          dateStrings: true,
          decimalNumbers: true,
          supportBigNumbers: true,
          multipleStatements: false,
          // JSON as the text the server sends, as MySQL's own clients show it.
          jsonStrings: true,
        });
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`mariadbd did not start: ${(error as Error).message}\n${log}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    const db = new MariaDb(dir, server, connection, socket);
    for (const statement of [
      `SET NAMES utf8mb4 COLLATE ${COLLATION}`,
      "SET sql_mode = 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
      'SET group_concat_max_len = 1024',
      // MySQL 8's cte_max_recursion_depth; past it MariaDB warns (1931) where MySQL 8 fails (3636).
      'SET max_recursive_iterations = 1000',
      'SET div_precision_increment = 4',
      `SET time_zone = '${timeZone === 'UTC' ? '+00:00' : timeZone}'`,
      `CREATE DATABASE compat CHARACTER SET utf8mb4 COLLATE ${COLLATION}`,
      'USE compat',
    ]) {
      await connection.query(statement);
    }
    return db;
  }

  /** Creates a table per dataset (the MySQL column types of its fields) and inserts the records. */
  async load(datasets: readonly DatasetConfig[], records: Record<string, Record<string, unknown>[]>): Promise<void> {
    for (const dataset of datasets) {
      const columns = [
        '`id` VARCHAR(64) NOT NULL PRIMARY KEY',
        ...dataset.fields.map((field) => `\`${field.name}\` ${COLUMN_TYPES[field.type]}`),
        '`gmt_create` DATETIME',
        '`gmt_modified` DATETIME',
      ];
      await this.connection.query(`CREATE TABLE \`${dataset.datasetCode}\` (${columns.join(', ')})`);
      const names = ['id', ...dataset.fields.map((field) => field.name), 'gmt_create', 'gmt_modified'];
      for (const record of records[dataset.datasetCode] ?? []) {
        const values = names.map((name) => {
          const value = record[name];
          if (value === undefined || value === null) return null;
          const field = dataset.fields.find((f) => f.name === name);
          if (field?.type === 'json') return JSON.stringify(value);
          if (typeof value === 'boolean') return value ? 1 : 0;
          return value;
        });
        await this.connection.query(
          `INSERT INTO \`${dataset.datasetCode}\` VALUES (${names.map(() => '?').join(', ')})`,
          values,
        );
      }
    }
  }

  /** Runs a corpus query (or its MySQL 8 form), with `#{name}` bound as MyBatis binds it. */
  async run(query: CorpusQuery, sql = query.sql): Promise<Answer> {
    const values: unknown[] = [];
    const text = sql.replace(/#\{\s*(\w+)\s*\}/g, (_all, name: string) => {
      values.push(query.params?.[name] ?? null);
      return '?';
    });
    const [rows, fields] = await this.connection.query({ sql: text, values, rowsAsArray: true });
    return {
      columns: (fields ?? []).map((field) => field.name),
      rows: (rows as unknown[][]).map((row) =>
        row.map((value) => (Buffer.isBuffer(value) ? value.toString('utf8') : value)),
      ),
    };
  }

  /** The codes of the warnings the last statement left (MariaDB answers some of MySQL 8's errors with one). */
  async warningCodes(): Promise<number[]> {
    const [rows] = await this.connection.query('SHOW WARNINGS');
    return (rows as { Code: number }[]).map((row) => Number(row.Code));
  }

  async stop(): Promise<void> {
    await this.connection.end().catch(() => undefined);
    this.server.kill('SIGTERM');
    await new Promise((resolve) => {
      if (this.server.exitCode !== null) resolve(undefined);
      else this.server.once('exit', resolve);
    });
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A JSON text as MySQL 8 prints a JSON value: keys by length then bytes, ", " and ": " between. */
export function mysqlJsonText(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  const print = (value: unknown): string => {
    if (Array.isArray(value)) return `[${value.map(print).join(', ')}]`;
    if (value !== null && typeof value === 'object') {
      const keys = Object.keys(value).sort(
        (a, b) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b)),
      );
      return `{${keys.map((key) => `${JSON.stringify(key)}: ${print((value as Record<string, unknown>)[key])}`).join(', ')}}`;
    }
    return JSON.stringify(value);
  };
  return print(JSON.parse(text));
}
