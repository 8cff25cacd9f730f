/**
 * Hooks around a data operation (docs/interface.md §15): the configuration's `before` functions turn the
 * request's `paramMap` (batch create: `paramList`) into what the operation runs with, and its `after` functions
 * turn the operation's `data` into what the caller receives. Several hooks on one node run in declared order.
 *
 * A `before` hook sees only what the operation would take: `paramMap` (absent: get-list's empty object, a 1001
 * for the others) or batch create's `paramList` (1 to 1000 objects), read by the operation's own rules, inside a
 * body already bounded in depth (`MAX_BODY_DEPTH`); a request the operation would refuse for its shape never
 * reaches a function. A `before` hook cannot widen access: its result becomes the request body the operation
 * validates and checks against the caller's grant, exactly as a caller's own request (a result nested deeper than
 * a body may be is refused as that body would be). Its `context.client` reads run the same operations (get-one,
 * get-list, custom SQL) as the caller, through the same permission code.
 *
 * An operation with no hook configured runs untouched, and the sandbox is never loaded or started.
 */
import { readAccess } from '../access/dataset-access';
import type { Catalog } from '../catalog/catalog';
import type { FunctionConfig, HookConfig } from '../catalog/schema';
import { MAX_BODY_DEPTH, nestsDeeperThan } from '../contract/body-schemas';
import { InternalError, InvalidParameterError } from '../contract/errors';
import type { OperationName } from '../contract/routes';
import type { Operation, OperationContext } from '../operation/operation';
import { readParamMap } from '../operation/param-map';
import { readParamList } from '../operations/batch-create';
import { getListOperation } from '../operations/get-list-operation';
import { getOneOperation } from '../operations/get-one';
import { prewarmSandbox, prewarmSandboxIfShipped, runFunction, SandboxFailure } from '../sandbox/sandbox';

export const DEFAULT_TIMEOUT_MS = 200;
export const DEFAULT_MEMORY_MB = 32;
export const MAX_READS_PER_RUN = 10;
/** A before hook's thrown message is returned to the caller, cut to this length. */
export const MAX_HOOK_MESSAGE = 500;

type Node = 'before' | 'after';

/** The hooks of one node of one operation for this caller, in declared order, with their functions. */
export function hooksFor(
  catalog: Catalog,
  operation: OperationName,
  datasetCode: string,
  appCode: string,
  node: Node,
): FunctionConfig[] {
  const hooks: HookConfig[] = catalog.config.hooks ?? [];
  if (hooks.length === 0) return [];
  const functions = new Map((catalog.config.functions ?? []).map((fn) => [fn.name, fn]));
  return hooks
    .filter(
      (hook) =>
        hook.operation === operation &&
        hook.datasetCode === datasetCode &&
        hook.node === node &&
        (hook.appCode === undefined || hook.appCode === appCode),
    )
    .map((hook) => functions.get(hook.function))
    .filter((fn): fn is FunctionConfig => fn !== undefined);
}

/** Wrap an operation so that its configured hooks run before and after it. */
export function withHooks(operation: Operation): Operation {
  prewarmSandboxIfShipped();
  return {
    name: operation.name,
    async run(context, body) {
      const dataset = context.dataset;
      if (!dataset) return operation.run(context, body);
      const appCode = context.caller.application.appCode;
      const before = hooksFor(context.catalog, operation.name, dataset.datasetCode, appCode, 'before');
      const after = hooksFor(context.catalog, operation.name, dataset.datasetCode, appCode, 'after');
      if (before.length === 0 && after.length === 0) return operation.run(context, body);
      // The sandbox's worker starts while the operation runs, not after it (docs/hooks.md).
      prewarmSandbox();

      let request = body;
      if (before.length > 0) {
        // What the operation would run with, read by its own rules: a request it would refuse for its shape is
        // refused before any function sees it.
        const key = operation.name === 'batch-create' ? 'paramList' : 'paramMap';
        let input: unknown =
          key === 'paramList' ? readParamList(body) : readParamMap(body, operation.name === 'get-list');
        for (const fn of before) {
          input = await runHook(fn, 'before', context, input);
          // The result is checked as a caller's request: no deeper than a body may be (the body holds it 1 deep).
          if (nestsDeeperThan(input, MAX_BODY_DEPTH - 1)) {
            throw new InvalidParameterError(
              `the request as a before hook returned it nests deeper than ${MAX_BODY_DEPTH} levels`,
            );
          }
        }
        request = { ...body, [key]: input };
      }
      let data = await operation.run(context, request);
      for (const fn of after) data = await runHook(fn, 'after', context, data);
      return data;
    },
  };
}

async function runHook(fn: FunctionConfig, node: Node, context: OperationContext, input: unknown): Promise<unknown> {
  const started = performance.now();
  const user = context.caller.user;
  let failed = false;
  try {
    return await runFunction(
      {
        name: fn.name,
        source: fn.source ?? '',
        timeoutMs: fn.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        memoryMb: fn.memoryMb ?? DEFAULT_MEMORY_MB,
      },
      {
        params: input,
        context: {
          appCode: context.caller.application.appCode,
          datasetCode: context.dataset?.datasetCode,
          operation: context.operation,
          requestId: context.requestId,
          userInfo: user
            ? { userId: user.userId, userName: user.userName, loginName: user.loginName, role: user.role ?? null }
            : null,
        },
        read: (kind, target, args) => readAsCaller(context, kind, target, args),
        maxReads: MAX_READS_PER_RUN,
      },
    );
  } catch (error) {
    if (error instanceof SandboxFailure && error.kind === 'threw' && node === 'before') {
      throw new InvalidParameterError(error.message.slice(0, MAX_HOOK_MESSAGE) || `refused by ${fn.name}`);
    }
    // Fail closed: the caller sees a 3001 with the request id; the log names the function and why.
    const why = error instanceof Error ? error.message : String(error);
    failed = true;
    context.telemetry.detail('hookFailure', fn.name);
    throw new InternalError(`${node} hook function '${fn.name}' failed: ${why}`, { cause: error });
  } finally {
    context.telemetry.hookRun?.({ functionName: fn.name, node, durationMs: performance.now() - started, failed });
  }
}

let customSql: (() => Promise<Operation>) | undefined;

/**
 * How a hook's `context.client.sql` reaches custom SQL in this function: set by the entries of the operations hooks
 * run in (composition/hooked-handler.ts), which load it on a hook's first query, so their start carries none of it.
 */
export function useHookCustomSql(load: () => Promise<Operation>): void {
  customSql = load;
}

/** A `context.client` read: the operation a caller would call, on its own grant for the target dataset. */
async function readAsCaller(
  context: OperationContext,
  kind: string,
  target: string,
  args: unknown[],
): Promise<unknown> {
  if (kind === 'sql') {
    const params = args[0] as Record<string, unknown>;
    const body = { sqlCode: target, params };
    if (!customSql) throw new Error('custom SQL is not reachable from hooks in this function');
    const executeSqlOperation = await customSql();
    return executeSqlOperation.run(
      { ...context, operation: 'execute-sql', dataset: undefined, grant: undefined, view: undefined },
      body,
    );
  }
  // A read's record is not the answer's: its revision must not become the request's ETag.
  const { answerRevision: _answersElsewhere, ...reader } = context;
  const readContext = { ...reader, ...readAccess(context.catalog, context.caller, target) };
  if (kind === 'getOne') {
    return getOneOperation.run({ ...readContext, operation: 'get-one' }, { paramMap: { id: args[0] } });
  }
  if (kind === 'getList') {
    return getListOperation.run({ ...readContext, operation: 'get-list' }, { paramMap: args[0] ?? {} });
  }
  throw new Error(`unknown read '${kind}'`);
}
