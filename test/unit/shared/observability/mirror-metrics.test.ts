/**
 * The mirror function's log line (docs/deploying.md, "Custom SQL on Aurora"): embedded metric format, so the lag
 * alarm and the dashboard read `sqlMirrorLagSeconds` with no extra infrastructure; a run that applied nothing
 * publishes no lag at all, which the alarm counts as the mirror standing still.
 */
import { logMirrorRun } from '../../../../shared/observability/mirror-metrics';
import { setLogSink } from '../../../../shared/observability/request-log';

function linesOf(run: () => void): Record<string, unknown>[] {
  const lines: string[] = [];
  const previous = setLogSink((line) => lines.push(line));
  try {
    run();
  } finally {
    setLogSink(previous);
  }
  return lines.map((line) => JSON.parse(line));
}

describe("the mirror function's log line", () => {
  it('publishes the lag, the failed rounds and the datasets being copied', () => {
    const [line] = linesOf(() =>
      logMirrorRun(
        { rounds: 50, failedRounds: 0, lagSeconds: 1.234, backfilling: 1, backfilledAgain: [], durationMs: 65_012.4 },
        'NS',
        7,
      ),
    );
    expect(line).toEqual({
      _aws: {
        Timestamp: 7,
        CloudWatchMetrics: [
          {
            Namespace: 'NS',
            Dimensions: [[]],
            Metrics: [
              { Name: 'sqlMirrorRoundFailures', Unit: 'Count' },
              { Name: 'sqlMirrorBackfilling', Unit: 'Count' },
              { Name: 'sqlMirrorBackfillsAgain', Unit: 'Count' },
              { Name: 'sqlMirrorLagSeconds', Unit: 'Seconds' },
            ],
          },
        ],
      },
      level: 'INFO',
      operation: 'sql-mirror',
      rounds: 50,
      sqlMirrorRoundFailures: 0,
      sqlMirrorBackfilling: 1,
      sqlMirrorBackfillsAgain: 0,
      sqlMirrorLagSeconds: 1.2,
      durationMs: 65_012,
    });
  });

  it('publishes no lag when no round applied the change log, and says why at ERROR', () => {
    const [line] = linesOf(() =>
      logMirrorRun(
        {
          rounds: 3,
          failedRounds: 3,
          backfilling: 0,
          backfilledAgain: [],
          durationMs: 65_000,
          error: 'DatabaseErrorException: down',
        },
        'NS',
        7,
      ),
    );
    expect(line).toMatchObject({ level: 'ERROR', sqlMirrorRoundFailures: 3, error: 'DatabaseErrorException: down' });
    expect(line).not.toHaveProperty('sqlMirrorLagSeconds');
    expect(JSON.stringify(line)).not.toContain('sqlMirrorLagSeconds');
  });

  it('names at WARN the datasets a run started copying again, their position past the change log retention', () => {
    const [line] = linesOf(() =>
      logMirrorRun(
        {
          rounds: 40,
          failedRounds: 0,
          lagSeconds: 0.5,
          backfilling: 2,
          backfilledAgain: ['orders', 'users'],
          durationMs: 65_000,
        },
        'NS',
        7,
      ),
    );
    expect(line).toMatchObject({
      level: 'WARN',
      sqlMirrorBackfilling: 2,
      sqlMirrorBackfillsAgain: 2,
      backfilledAgain: ['orders', 'users'],
    });
  });
});
