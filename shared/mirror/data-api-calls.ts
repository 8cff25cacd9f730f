/**
 * One query's calls to the RDS Data API (docs/interface.md §20): statements in one transaction of its own, each
 * call tried again while an auto-paused cluster resumes (DatabaseResumingException), until the query's deadline;
 * past it, 2001 with Retry-After.
 */
import {
  BeginTransactionCommand,
  DatabaseResumingException,
  ExecuteStatementCommand,
  RollbackTransactionCommand,
} from '@aws-sdk/client-rds-data';
import { QueryTimeoutError } from '../contract/errors';
import { type DataApiTarget, recordsOf, statementInput } from './data-api-session';

/** How long a resume takes at most, for Retry-After (Aurora Serverless v2 resumes within about 15 s). */
const RESUME_RETRY_AFTER_SECONDS = 15;

/** One query's calls to the Data API: in one transaction, retried while the cluster resumes, until a deadline. */
export class DataApiCalls {
  transactionId: string | undefined;

  constructor(
    private readonly target: DataApiTarget,
    private readonly deadline: number,
    private readonly limitMs: number,
    private readonly pollMs: number,
  ) {}

  async begin(): Promise<void> {
    const { transactionId } = await this.retried(() =>
      this.target.client.send(
        new BeginTransactionCommand({
          resourceArn: this.target.resourceArn,
          secretArn: this.target.secretArn,
          database: this.target.database,
        }),
      ),
    );
    this.transactionId = transactionId;
  }

  async rows(sql: string, values: readonly unknown[] = [], outside = false): Promise<Record<string, unknown>[]> {
    const transaction = outside ? undefined : this.transactionId;
    const output = await this.retried(() =>
      this.target.client.send(new ExecuteStatementCommand(statementInput(this.target, sql, values, transaction))),
    );
    return recordsOf(output.formattedRecords);
  }

  /** Ends the transaction (read only: nothing to commit); a transaction the Data API already ended is fine. */
  async end(): Promise<void> {
    const transactionId = this.transactionId;
    this.transactionId = undefined;
    if (!transactionId) return;
    await this.target.client
      .send(
        new RollbackTransactionCommand({
          resourceArn: this.target.resourceArn,
          secretArn: this.target.secretArn,
          transactionId,
        }),
      )
      .catch(() => undefined);
  }

  /** The call, tried again while the cluster resumes from a pause, until the deadline. */
  private async retried<T>(call: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await call();
      } catch (error) {
        if (!(error instanceof DatabaseResumingException)) throw error;
        const left = this.deadline - Date.now();
        if (left <= this.pollMs) {
          throw new QueryTimeoutError(
            `the MySQL engine is resuming after a pause and did not answer within the query's limit of ${this.limitMs} ms; try again shortly`,
            RESUME_RETRY_AFTER_SECONDS,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, this.pollMs));
      }
    }
  }
}
