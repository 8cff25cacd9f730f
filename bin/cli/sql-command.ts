/**
 * `das sql status` (docs/interface.md §20): where the MySQL mirror of custom SQL stands, per dataset: the rows
 * its table holds, the change log position it has applied for good, when it last held every acknowledged write
 * and so how many seconds it is behind, and its backfill. Read from the mirror's own bookkeeping in MySQL: the
 * engine the running local service uses (`npm start -- --sql-engine mysql://…` recorded it), the one
 * `--sql-engine` / `DAS_SQL_ENGINE` names, or with `--stage` a deployment's Aurora cluster (sql-stage.ts).
 */
import { CommandFailure, type CommandIo, parseCommandArgs, UsageError } from '../../packages/client/src/cli/cli-io';
import { MirrorTables, type SqlSession } from '../../shared/mirror/mirror-tables';
import { describeTarget, parseMysqlUrl, poolOf, sessionOf } from '../../shared/mirror/mysql-connection';
import { positionTime } from '../../shared/storage/event-store';
import { readLocalSqlEngine } from '../local/service-address';
import { stageMirror } from './sql-stage';
import { checkedStage } from './stage-option';

const HELP = 'das sql --help';

export const SQL_USAGE = `Usage: das sql status [--sql-engine mysql://user:password@host:port/db | --stage <stage>] [--json]

status   per dataset, the MySQL mirror custom SQL runs on: its rows, the change log position it has applied
         (and that position's time), how many seconds it is behind, and whether its backfill is done (or runs
         again, and why: a mirror stopped longer than the change log keeps changes copies the dataset again)

  --sql-engine <url>    the MySQL engine (default: DAS_SQL_ENGINE, else the one the running npm start uses)
  --stage <stage>       a deployment's Aurora cluster instead, through the RDS Data API as its query user, with
                        the environment's AWS credentials and region (docs/deploying.md lists the IAM actions)
  --json                print JSON instead of text
`;

export interface MirrorDatasetStatus {
  datasetCode: string;
  rows: number;
  /** The change log position applied for good, and its time. */
  position: string | null;
  positionAt: string | null;
  /** Seconds since the mirror last held every acknowledged write; null before its first round. */
  lagSeconds: number | null;
  /** `again`: why the backfill runs again (the mirror's position had passed the change log's retention). */
  backfill: { done: boolean; rows: number; again?: string };
}

export async function runSql(args: string[], io: CommandIo): Promise<void> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      'sql-engine': { type: 'string' },
      stage: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    HELP,
    true,
  );
  if (values.help) {
    io.out(SQL_USAGE);
    return;
  }
  const [action, ...rest] = positionals;
  if (action !== 'status') {
    throw new UsageError(
      action ? `unknown sql command '${action}'; there is: status` : 'which sql command? das sql status',
      HELP,
    );
  }
  if (rest.length > 0) throw new UsageError(`unexpected ${rest.join(' ')}`, HELP);
  if (values.stage !== undefined) {
    if (values['sql-engine'] !== undefined) {
      throw new UsageError('--sql-engine or --stage: a MySQL engine or a deployment, not both', HELP);
    }
    checkedStage(values.stage, HELP);
  }
  const mirror =
    values.stage === undefined
      ? localMirror(values['sql-engine'])
      : await stageMirror(values.stage, () =>
          io.err('The cluster is resuming after a pause (0 ACUs); waiting for it, a minute at most.\n'),
        );
  let statuses: MirrorDatasetStatus[];
  try {
    const now = Date.now();
    statuses = (await new MirrorTables(mirror.session).status()).map((state) => {
      const at = state.position === undefined ? undefined : positionTime(state.position);
      return {
        datasetCode: state.datasetCode,
        rows: state.rows,
        position: state.position ?? null,
        positionAt: at === undefined ? null : new Date(at).toISOString(),
        // Copied again, the mirror is as far behind as the position it had stopped at, until the copy is done.
        lagSeconds: lagOf(now, !state.backfillDone && state.staleSince > 0 ? state.staleSince : state.caughtUpAt),
        backfill: {
          done: state.backfillDone,
          rows: state.backfillRows,
          ...(!state.backfillDone && state.backfillReason ? { again: state.backfillReason } : {}),
        },
      };
    });
  } catch (error) {
    if (error instanceof CommandFailure) throw error;
    throw new CommandFailure(`das sql status: ${mirror.where}: ${(error as Error).message}`);
  } finally {
    await mirror.close();
  }
  io.out(values.json ? `${JSON.stringify(statuses, null, 2)}\n` : statusText(statuses, mirror.where));
}

/** The mirror on a MySQL server reached over its own protocol: named, or the one the local service uses. */
function localMirror(named: string | undefined): { session: SqlSession; where: string; close(): Promise<void> } {
  const url = named ?? (process.env.DAS_SQL_ENGINE || undefined) ?? readLocalSqlEngine();
  if (!url || url === 'embedded') {
    throw new CommandFailure(
      'das sql status: custom SQL runs on the embedded engine here (no mirror); name a MySQL engine with ' +
        '--sql-engine mysql://… or DAS_SQL_ENGINE, run npm start -- --sql-engine mysql://…, or name a deployment ' +
        'with --stage',
    );
  }
  let target: ReturnType<typeof parseMysqlUrl>;
  try {
    target = parseMysqlUrl(url);
  } catch (error) {
    throw new UsageError((error as Error).message, HELP);
  }
  const pool = poolOf(target, target, { connectionLimit: 1, init: [] });
  return { session: sessionOf(pool), where: describeTarget(target), close: () => pool.end() };
}

function lagOf(now: number, since: number): number | null {
  return since > 0 ? Math.max(0, Math.round((now - since) / 100) / 10) : null;
}

function statusText(statuses: readonly MirrorDatasetStatus[], where: string): string {
  if (statuses.length === 0) return `The mirror at ${where} holds no dataset yet.\n`;
  const lines = statuses.map((s) => {
    const lag = s.lagSeconds === null ? 'not caught up yet' : `${s.lagSeconds} s behind`;
    const running = s.backfill.again ? 'backfill running again' : 'backfill running';
    const why = s.backfill.again ? `: ${s.backfill.again}` : '';
    const backfill = s.backfill.done ? 'backfill done' : `${running} (${s.backfill.rows} records so far)${why}`;
    return `${s.datasetCode}: ${s.rows} rows, ${lag}, change log applied through ${s.positionAt ?? 'none'}, ${backfill}`;
  });
  return `MySQL mirror at ${where}:\n${lines.join('\n')}\n`;
}
