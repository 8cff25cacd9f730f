/**
 * A result larger than one Data API response (1 MiB), read whole (docs/interface.md §20): the statement runs once
 * into a temporary table of the query's own session, its rows numbered in the statement's order (an
 * AUTO_INCREMENT column filled as the SELECT delivers its rows, ORDER BY included); the rows' JSON sizes cut the
 * numbers into pages of about 512 KiB, and the pages are read in order, counted against the response limit (1001
 * past it). The table is private to the session and dropped at the end; the query user needs CREATE TEMPORARY
 * TABLES besides SELECT, and still cannot write any table of the mirror.
 */
import { randomBytes } from 'node:crypto';
import { InvalidParameterError } from '../contract/errors';
import type { MirrorQueryRequest } from '../sql/mirror-engine';
import type { ResultRow } from '../sql/query-engine';
import type { DataApiCalls } from './data-api-calls';
import { quoteIdentifier } from './mirror-names';
import { convertRow, RowBudget, tooLarge } from './query-outcomes';

/** Bytes of JSON per page: room to spare under 1 MiB for the response's own framing and one long row. */
const PAGE_BYTES = 512 * 1024;
const ROW_NUMBER = 'das_row';

/** A single row larger than one Data API response: it cannot be read through the Data API at all. */
export class TooLargeForOnePage extends Error {
  answer(): InvalidParameterError {
    return new InvalidParameterError(
      'a row of the result is larger than the 1 MiB the MySQL engine can return at once: select fewer or shorter columns',
    );
  }
}

export async function pagedRows(calls: DataApiCalls, request: MirrorQueryRequest): Promise<ResultRow[]> {
  const table = quoteIdentifier(`das_result_${randomBytes(6).toString('hex')}`);
  try {
    try {
      await calls.rows(
        `CREATE TEMPORARY TABLE ${table} (${ROW_NUMBER} BIGINT AUTO_INCREMENT PRIMARY KEY) ${request.sql}`,
        request.values,
      );
    } catch (error) {
      if (/^Database error code: 1060\./.test((error as Error).message)) {
        throw new InvalidParameterError(
          'the result is larger than 1 MiB and two of its columns have the same name: give each column its own name (AS) to read it',
        );
      }
      throw error;
    }
    const columns = (await calls.rows(`SHOW COLUMNS FROM ${table}`))
      .map((column) => String(column.Field))
      .filter((name) => name !== ROW_NUMBER);
    const keyBytes = columns.reduce((sum, name) => sum + Buffer.byteLength(JSON.stringify(name)) + 1, 0);
    const size = `LENGTH(JSON_ARRAY(${columns.map(quoteIdentifier).join(', ')})) + ${keyBytes}`;
    const starts = await calls.rows(
      `SELECT MIN(${ROW_NUMBER}) AS first FROM (SELECT ${ROW_NUMBER}, FLOOR((SUM(n) OVER (ORDER BY ${ROW_NUMBER}) - n) / ${PAGE_BYTES}) AS page ` +
        `FROM (SELECT ${ROW_NUMBER}, ${size} AS n FROM ${table}) sized) paged GROUP BY page ORDER BY first`,
    );
    const bounds = starts.map((start) => Number(start.first));
    const rows: ResultRow[] = [];
    const budget = new RowBudget(request.maxBytes);
    for (const [index, first] of bounds.entries()) {
      const next = bounds[index + 1];
      const page = await readPage(
        calls,
        `SELECT * FROM ${table} WHERE ${ROW_NUMBER} >= ?${next === undefined ? '' : ` AND ${ROW_NUMBER} < ?`} ORDER BY ${ROW_NUMBER}`,
        next === undefined ? [first] : [first, next],
      );
      for (const row of page) {
        delete row[ROW_NUMBER];
        const converted = convertRow(row);
        if (!budget.add(converted)) throw tooLarge();
        rows.push(converted);
      }
    }
    return rows;
  } finally {
    await calls.rows(`DROP TEMPORARY TABLE IF EXISTS ${table}`).catch(() => undefined);
  }
}

async function readPage(calls: DataApiCalls, sql: string, values: number[]): Promise<Record<string, unknown>[]> {
  try {
    return await calls.rows(sql, values);
  } catch (error) {
    if (/response size limit/i.test((error as Error).message)) throw new TooLargeForOnePage();
    throw error;
  }
}
