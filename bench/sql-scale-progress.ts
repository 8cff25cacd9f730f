/**
 * What `npm run bench -- sql-scale` watches while a load runs: every few seconds, the records the load has had
 * acknowledged, the events the change log holds of them, the rows of the MySQL mirror and where its bookkeeping
 * says it stands (as `das sql status` reads it), and the memory of the service's process and of MariaDB's.
 */
import { execFileSync } from 'node:child_process';
import { MirrorTables, type SqlSession } from '../shared/mirror/mirror-tables';

export interface Sample {
  /** Milliseconds since the load began. */
  at: number;
  acknowledged: number;
  logged: number;
  mirrored: number;
  /** Seconds since the mirror last held every acknowledged write (`das sql status`'s "behind"); null before. */
  lagSeconds: number | null;
  rssMiB: number;
  mariadbMiB: number;
}

export interface Counters {
  acknowledged: number;
  logged: number;
}

const MIB = 1024 * 1024;

/** The resident memory of this process's MariaDB child (MiB), 0 when it cannot be read. */
export function mariadbRssMiB(): number {
  try {
    const out = execFileSync('ps', ['-o', 'rss=,comm=', '--ppid', String(process.pid)], { encoding: 'utf8' });
    const line = out.split('\n').find((l) => l.includes('mariadbd'));
    return line ? Number(line.trim().split(/\s+/)[0]) / 1024 : 0;
  } catch {
    return 0;
  }
}

export class ProgressSampler {
  readonly samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private readonly tables: MirrorTables;

  constructor(
    session: SqlSession,
    private readonly counters: Counters,
    private readonly datasetCode: string,
    private readonly begun: number,
    private readonly everyMs: number,
  ) {
    this.tables = new MirrorTables(session);
  }

  start(): void {
    const tick = () => {
      this.running = this.sample().then(() => {
        if (this.timer) this.timer = setTimeout(tick, this.everyMs);
      });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  async sample(): Promise<Sample> {
    const now = Date.now();
    const state = (await this.tables.status()).find((s) => s.datasetCode === this.datasetCode);
    const sample: Sample = {
      at: now - this.begun,
      acknowledged: this.counters.acknowledged,
      logged: this.counters.logged,
      mirrored: state?.rows ?? 0,
      lagSeconds: state?.backfillDone && state.caughtUpAt > 0 ? (now - state.caughtUpAt) / 1000 : null,
      rssMiB: process.memoryUsage().rss / MIB,
      mariadbMiB: mariadbRssMiB(),
    };
    this.samples.push(sample);
    return sample;
  }

  /** The highest rate (rows a second) of `pick` over any window of at least `windowMs` between two samples. */
  peakRate(pick: (s: Sample) => number, windowMs: number): number {
    let best = 0;
    for (let i = 0, j = 0; j < this.samples.length; j++) {
      const last = this.samples[j] as Sample;
      while (i < j && last.at - (this.samples[i + 1] as Sample).at >= windowMs) i++;
      const first = this.samples[i] as Sample;
      if (last.at - first.at >= windowMs)
        best = Math.max(best, ((pick(last) - pick(first)) * 1000) / (last.at - first.at));
    }
    return best;
  }
}
