/**
 * A twin of the RDS Data API (Aurora MySQL) for tests: the five restJson1 routes `@aws-sdk/client-rds-data` calls
 * (`/Execute`, `/BatchExecute`, `/BeginTransaction`, `/CommitTransaction`, `/RollbackTransaction`), running the
 * statements on MariaDB through mysql2. The secret ARN names the database user; a transaction holds one connection
 * of its own; a statement outside one runs on any connection of its user, committed at once. Errors take the Data
 * API's shapes: a statement MySQL fails is a BadRequestException `Database error code: <n>. Message: <text>`; an
 * error inside a transaction ends it; a statement past the Data API's own limit (45 s, settable) is cancelled and
 * answered StatementTimeoutException; a response over 1 MiB is refused. Faults: the database resuming for the next
 * N calls (DatabaseResumingException).
 *
 * Point a client at it with `endpoint: twin.endpoint` and any credentials.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FieldPacket } from 'mysql2';
import mysql from 'mysql2/promise';
import { QUERY_SESSION } from '../../../shared/mirror/mysql-connection';
import { freePort } from '../free-port';
import { positional, resultMembers, TwinRequestError, type WireParameter } from './twin-statements';

export interface TwinUser {
  user: string;
  password: string;
}

export interface DataApiTwinOptions {
  /** The MariaDB server's Unix socket, and a user that may KILL any statement (root). */
  socket: string;
  admin: TwinUser;
  resourceArn: string;
  /** Each secret ARN's database user. */
  secrets: Record<string, TwinUser>;
  /** The Data API's own statement limit (ms). */
  statementLimitMs?: number;
  /** Most bytes a response may carry. */
  responseLimitBytes?: number;
}

interface ExecuteRequest {
  resourceArn?: string;
  secretArn?: string;
  database?: string;
  sql?: string;
  parameters?: WireParameter[];
  parameterSets?: WireParameter[][];
  transactionId?: string;
  formatRecordsAs?: string;
  includeResultMetadata?: boolean;
  resultSetOptions?: { decimalReturnType?: string };
}

class ApiError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly status = 400,
  ) {
    super(message);
  }
}

export const RESPONSE_TOO_LARGE = 'Database returned more than the allowed response size limit';
export const RESUMING =
  'The Aurora DB instance db-mirror-1 is resuming after being auto-paused. Please wait a few seconds and try again.';
const MIB = 1024 * 1024;

export class DataApiTwin {
  /** Every call, in order: its route and, for a statement, its SQL. */
  readonly calls: { route: string; sql?: string; transactionId?: string }[] = [];
  private resumingCalls = 0;
  private readonly pools = new Map<string, mysql.Pool>();
  private readonly transactions = new Map<string, mysql.PoolConnection>();
  private readonly admin: mysql.Pool;

  private constructor(
    private readonly server: Server,
    readonly endpoint: string,
    private readonly options: DataApiTwinOptions,
  ) {
    this.admin = mysql.createPool({ socketPath: options.socket, ...options.admin, connectionLimit: 2 });
  }

  static async start(options: DataApiTwinOptions): Promise<DataApiTwin> {
    const port = await freePort();
    const server = createServer();
    const twin = new DataApiTwin(server, `http://127.0.0.1:${port}`, options);
    server.on('request', (request, response) => void twin.handle(request, response));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return twin;
  }

  /** Sets the Data API's own statement limit (ms). */
  limitStatements(ms: number): void {
    this.options.statementLimitMs = ms;
  }

  /** The next `calls` calls answer DatabaseResumingException, as an auto-paused cluster does while it resumes. */
  resumeFor(calls: number): void {
    this.resumingCalls = calls;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server.close(resolve));
    for (const connection of this.transactions.values()) connection.destroy();
    await Promise.allSettled([this.admin.end(), ...[...this.pools.values()].map((pool) => pool.end())]);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const route = (request.url ?? '').split('?')[0] ?? '';
    let body: ExecuteRequest = {};
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExecuteRequest) : {};
      this.calls.push({
        route,
        ...(body.sql ? { sql: body.sql } : {}),
        ...(body.transactionId ? { transactionId: body.transactionId } : {}),
      });
      if (this.resumingCalls > 0) {
        this.resumingCalls -= 1;
        throw new ApiError('DatabaseResumingException', RESUMING);
      }
      const answer = JSON.stringify(await this.route(route, body));
      if (Buffer.byteLength(answer) > (this.options.responseLimitBytes ?? MIB)) {
        throw new ApiError('BadRequestException', RESPONSE_TOO_LARGE);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(answer);
    } catch (error) {
      if (body.transactionId && route === '/Execute' && this.transactions.has(body.transactionId)) {
        await this.end(body.transactionId, 'ROLLBACK').catch(() => undefined);
      }
      const api =
        error instanceof ApiError
          ? error
          : error instanceof TwinRequestError
            ? new ApiError('BadRequestException', error.message)
            : databaseError(error);
      response
        .writeHead(api.status, { 'content-type': 'application/json', 'x-amzn-errortype': api.type })
        .end(JSON.stringify({ message: api.message, ...api.extra }));
    }
  }

  private async route(route: string, body: ExecuteRequest): Promise<unknown> {
    if (body.resourceArn !== this.options.resourceArn) {
      throw new ApiError('BadRequestException', `Invalid cluster arn: ${body.resourceArn}`);
    }
    switch (route) {
      case '/Execute':
        return this.execute(body);
      case '/BatchExecute':
        return this.batchExecute(body);
      case '/BeginTransaction': {
        const connection = await this.pool(body).getConnection();
        await connection.query('START TRANSACTION');
        const transactionId = randomBytes(96).toString('base64');
        this.transactions.set(transactionId, connection);
        return { transactionId };
      }
      case '/CommitTransaction':
        await this.end(body.transactionId, 'COMMIT');
        return { transactionStatus: 'Transaction Committed' };
      case '/RollbackTransaction':
        await this.end(body.transactionId, 'ROLLBACK');
        return { transactionStatus: 'Rollback Complete' };
      default:
        throw new ApiError('UnknownOperationException', `no operation at ${route}`, {}, 404);
    }
  }

  private async execute(body: ExecuteRequest): Promise<unknown> {
    const statement = positional(body.sql ?? '', body.parameters);
    return this.onConnection(body, async (connection) => {
      const [rows, fields] = await this.timed(connection, () => connection.query(statement.sql, statement.values));
      if (!Array.isArray(rows)) {
        return { numberOfRecordsUpdated: rows.affectedRows, generatedFields: [] };
      }
      return {
        numberOfRecordsUpdated: 0,
        ...resultMembers(rows as Record<string, unknown>[], (fields ?? []) as FieldPacket[], body),
      };
    });
  }

  private async batchExecute(body: ExecuteRequest): Promise<unknown> {
    return this.onConnection(body, async (connection) => {
      const updateResults: { generatedFields: [] }[] = [];
      for (const set of body.parameterSets ?? []) {
        const statement = positional(body.sql ?? '', set);
        await this.timed(connection, () => connection.query(statement.sql, statement.values));
        updateResults.push({ generatedFields: [] });
      }
      return { updateResults };
    });
  }

  /** Runs `work` on the transaction's connection, or on one of the user's connections (autocommit). */
  private async onConnection<T>(body: ExecuteRequest, work: (c: mysql.PoolConnection) => Promise<T>): Promise<T> {
    if (body.transactionId) return work(this.transaction(body.transactionId));
    const connection = await this.pool(body).getConnection();
    try {
      return await work(connection);
    } finally {
      connection.release();
    }
  }

  /** The statement, cancelled past the Data API's limit and answered as the Data API answers that. */
  private async timed<T>(connection: mysql.PoolConnection, statement: () => Promise<T>): Promise<T> {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void this.admin.query(`KILL QUERY ${connection.threadId}`).catch(() => undefined);
    }, this.options.statementLimitMs ?? 45_000);
    try {
      return await statement();
    } catch (error) {
      if (timedOut) {
        throw new ApiError('StatementTimeoutException', 'The execution of the SQL statement timed out.', {
          dbConnectionId: connection.threadId,
        });
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private transaction(id: string | undefined): mysql.PoolConnection {
    const connection = id ? this.transactions.get(id) : undefined;
    if (!connection) throw new ApiError('NotFoundException', `Transaction ${id} is not found`, {}, 404);
    return connection;
  }

  private async end(id: string | undefined, statement: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    const held = this.transaction(id);
    this.transactions.delete(id as string);
    try {
      await held.query(statement);
    } finally {
      held.release();
    }
  }

  private pool(body: ExecuteRequest): mysql.Pool {
    const user = body.secretArn ? this.options.secrets[body.secretArn] : undefined;
    if (!user) throw new ApiError('BadRequestException', `Error fetching secret ${body.secretArn}`);
    const key = `${body.secretArn}\n${body.database ?? ''}`;
    let pool = this.pools.get(key);
    if (!pool) {
      pool = mysql.createPool({
        socketPath: this.options.socket,
        user: user.user,
        password: user.password,
        ...(body.database ? { database: body.database } : {}),
        connectionLimit: 8,
        charset: 'utf8mb4',
        dateStrings: true,
        supportBigNumbers: true,
        jsonStrings: true,
        timezone: 'Z',
      });
      // Aurora MySQL 3 runs with MySQL 8's defaults; MariaDB's differ.
      pool.on('connection', (connection) => {
        for (const statement of QUERY_SESSION) connection.query(statement);
      });
      this.pools.set(key, pool);
    }
    return pool;
  }
}

function databaseError(error: unknown): ApiError {
  const errno = (error as { errno?: unknown }).errno;
  const message = (error as { sqlMessage?: unknown }).sqlMessage;
  if (typeof errno === 'number' && typeof message === 'string') {
    return new ApiError('BadRequestException', `Database error code: ${errno}. Message: ${message}`);
  }
  return new ApiError('InternalServerErrorException', String((error as Error).message ?? error), {}, 500);
}
