/**
 * The mirror's writes (docs/interface.md §20), over any connection to MySQL (`SqlSession`): its tables made and
 * kept in step with the configuration (mirror-schema.ts), records applied in batched upserts guarded by revision,
 * and the bookkeeping row of each dataset read and saved.
 */
import type { FieldConfig } from '../catalog/schema';
import { quoteName } from '../sql-dialect/mysql-render';
import {
  addColumns,
  addStateColumns,
  createDatasetTable,
  createStateTable,
  type MirrorRow,
  retypeColumns,
  rowValues,
  STATE_TABLE,
  upsertStatement,
} from './mirror-schema';

/** A connection to the mirror's database: one statement, `?` bound to `values`, its rows (none for a write). */
export interface SqlSession {
  execute(sql: string, values?: readonly unknown[]): Promise<Record<string, unknown>[]>;
}

export interface MirrorDataset {
  datasetCode: string;
  fields: readonly FieldConfig[];
}

/** Where a dataset's mirror stands. */
export interface MirrorState {
  /** The last change log position applied for good (every event up to it is in the table); absent: none yet. */
  position?: string;
  /** When the mirror last held every change acknowledged before then (epoch ms; 0: never). */
  caughtUpAt: number;
  /** Where the backfill of stored records continues (absent before its first page). */
  backfillCursor?: Record<string, unknown>;
  backfillDone: boolean;
  /** Records the backfill has written so far. */
  backfillRows: number;
  /** Why the backfill runs again (absent for a dataset's first backfill). */
  backfillReason?: string;
  /** The time of the position the mirror had stopped at when it began copying again (epoch ms; 0: not so). */
  staleSince: number;
}

/** Rows per upsert: well under max_allowed_packet whatever the records (the Data API takes 4 MB a call). */
const ROWS_PER_UPSERT = 100;

export class MirrorTables {
  private readonly prepared = new Map<string, string>();
  private stateReady = false;

  constructor(
    private readonly db: SqlSession,
    /** Run when a dataset's table is made: the query user is allowed to read it. */
    private readonly onCreated: (datasetCode: string) => Promise<void> = async () => undefined,
  ) {}

  /** Makes the bookkeeping table, each dataset's table, and the columns of fields added since. */
  async prepare(datasets: readonly MirrorDataset[]): Promise<void> {
    await this.prepareState();
    for (const dataset of datasets) {
      const signature = JSON.stringify(dataset.fields.map((field) => [field.name, field.type]));
      if (this.prepared.get(dataset.datasetCode) === signature) continue;
      await this.db.execute(createDatasetTable(dataset.datasetCode, dataset.fields));
      const rows = await this.db.execute(
        'SELECT COLUMN_NAME AS name, DATA_TYPE AS type FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
        [dataset.datasetCode],
      );
      const existing = new Map(rows.map((row) => [String(row.name).toLowerCase(), String(row.type)]));
      const retype = retypeColumns(dataset.datasetCode, dataset.fields, existing);
      if (retype) await this.db.execute(retype);
      const alter = addColumns(dataset.datasetCode, dataset.fields, existing);
      if (alter) {
        try {
          await this.db.execute(alter);
        } catch {
          // A server without instant ADD COLUMN (MySQL 8 before 8.0.12) still adds it online, in place.
          await this.db.execute(alter.replace(/ALGORITHM=INSTANT$/, 'ALGORITHM=INPLACE, LOCK=NONE'));
        }
      }
      await this.onCreated(dataset.datasetCode);
      this.prepared.set(dataset.datasetCode, signature);
    }
  }

  /** Applies rows (any order, replays welcome): each row ends at the highest revision it was given. */
  async apply(dataset: MirrorDataset, rows: readonly MirrorRow[]): Promise<void> {
    for (let start = 0; start < rows.length; start += ROWS_PER_UPSERT) {
      const chunk = rows.slice(start, start + ROWS_PER_UPSERT);
      await this.db.execute(
        upsertStatement(dataset.datasetCode, dataset.fields, chunk.length),
        chunk.flatMap((row) => rowValues(dataset.fields, row)),
      );
    }
  }

  /** Makes the bookkeeping table, or adds the columns an earlier version's table lacks. */
  private async prepareState(): Promise<void> {
    if (this.stateReady) return;
    await this.db.execute(createStateTable());
    const columns = await this.db.execute(
      'SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
      [STATE_TABLE],
    );
    const alter = addStateColumns(new Set(columns.map((column) => String(column.name).toLowerCase())));
    if (alter) await this.db.execute(alter);
    this.stateReady = true;
  }

  async state(datasetCode: string): Promise<MirrorState | undefined> {
    // Every column, so that a bookkeeping table made before its last columns were added still reads (status only
    // reads, as the query user, and never adds them).
    const [row] = await this.db.execute(`SELECT * FROM ${quoteName(STATE_TABLE)} WHERE dataset_code = ?`, [
      datasetCode,
    ]);
    if (!row) return undefined;
    return {
      ...(typeof row.position === 'string' ? { position: row.position } : {}),
      caughtUpAt: Number(row.caught_up_at),
      ...(typeof row.backfill_cursor === 'string' ? { backfillCursor: JSON.parse(row.backfill_cursor) } : {}),
      backfillDone: Number(row.backfill_done) === 1,
      backfillRows: Number(row.backfill_rows),
      ...(typeof row.backfill_reason === 'string' ? { backfillReason: row.backfill_reason } : {}),
      staleSince: Number(row.stale_since ?? 0),
    };
  }

  /**
   * Starts a dataset's backfill again from its first record, with the change log applied from `position`, in one
   * statement: a query that reads the row sees the backfill not done before it sees a newer `caught_up_at`.
   */
  async restartBackfill(
    datasetCode: string,
    restart: { position: string; reason: string; staleSince: number },
  ): Promise<void> {
    await this.db.execute(
      `UPDATE ${quoteName(STATE_TABLE)} SET position = ?, backfill_cursor = NULL, backfill_done = 0, backfill_rows = 0, ` +
        'backfill_reason = ?, stale_since = ? WHERE dataset_code = ?',
      [restart.position, restart.reason, restart.staleSince, datasetCode],
    );
  }

  /** Saves where the change log's application stands (the backfill's columns are left as they are). */
  async saveFeed(datasetCode: string, position: string | undefined, caughtUpAt: number): Promise<void> {
    await this.db.execute(
      `INSERT INTO ${quoteName(STATE_TABLE)} (dataset_code, position, caught_up_at) VALUES (?, ?, ?) ` +
        'ON DUPLICATE KEY UPDATE position = VALUES(position), caught_up_at = VALUES(caught_up_at)',
      [datasetCode, position ?? null, caughtUpAt],
    );
  }

  /** Saves where the backfill stands (the change log's columns are left as they are). */
  async saveBackfill(
    datasetCode: string,
    progress: { cursor?: Record<string, unknown> | undefined; done: boolean; rows: number },
  ): Promise<void> {
    await this.db.execute(
      `INSERT INTO ${quoteName(STATE_TABLE)} (dataset_code, backfill_cursor, backfill_done, backfill_rows) VALUES (?, ?, ?, ?) ` +
        'ON DUPLICATE KEY UPDATE backfill_cursor = VALUES(backfill_cursor), backfill_done = VALUES(backfill_done), ' +
        'backfill_rows = VALUES(backfill_rows)' +
        // A backfill done no longer needs its reason: the dataset is caught up as any other.
        (progress.done ? ', backfill_reason = NULL, stale_since = 0' : ''),
      [
        datasetCode,
        progress.cursor === undefined ? null : JSON.stringify(progress.cursor),
        progress.done ? 1 : 0,
        progress.rows,
      ],
    );
  }

  /**
   * Every dataset's state with its table's row count, for `das sql status`. Only reads, so that a deployment's
   * SELECT-only query user may run it: before the bookkeeping table is made, the mirror holds no dataset.
   */
  async status(): Promise<(MirrorState & { datasetCode: string; rows: number })[]> {
    const [made] = await this.db.execute(
      'SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?',
      [STATE_TABLE],
    );
    if (Number(made?.n ?? 0) === 0) return [];
    const codes = await this.db.execute(`SELECT dataset_code FROM ${quoteName(STATE_TABLE)} ORDER BY dataset_code`);
    const out: (MirrorState & { datasetCode: string; rows: number })[] = [];
    for (const { dataset_code } of codes) {
      const datasetCode = String(dataset_code);
      const state = await this.state(datasetCode);
      const [count] = await this.db.execute(`SELECT COUNT(*) AS n FROM ${quoteName(datasetCode)}`);
      if (state) out.push({ ...state, datasetCode, rows: Number(count?.n ?? 0) });
    }
    return out;
  }
}
