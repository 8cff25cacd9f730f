/**
 * bff-endpoint (`GET /client/bff/endpoint/{appCode}/{functionName}`, docs/interface.md §15): a backend function's
 * contract as a caller may know it, its description, version and modified time, and nothing else (never its
 * source, limits or hooks). Client-key authentication has already checked that the key belongs to `appCode`;
 * the function must be one of that application's, so another application's function is as unknown as a missing one.
 */
import { codeSchema } from '../contract/body-schemas';
import { DataNotFoundError, InternalError, InvalidParameterError } from '../contract/errors';
import type { BffEndpoint } from '../contract/operation-schemas';
import type { Operation } from '../operation/operation';
import { formatTimestamp } from '../records/timestamps';

export const bffEndpointOperation: Operation = {
  name: 'bff-endpoint',
  async run(context, request): Promise<BffEndpoint> {
    const name = request.functionName;
    if (!codeSchema.safeParse(name).success) {
      throw new InvalidParameterError('functionName must be 1 to 64 letters, digits, "_" or "-"');
    }
    const functionName = name as string;
    const appCode = context.caller.application.appCode;
    const found = context.catalog.backendFunction(appCode, functionName);
    if (!found) throw new DataNotFoundError(`backend function '${functionName}' not found in application '${appCode}'`);
    // Every deployed catalog carries its functions' versions (catalog-store.ts); one without is not a deployment's.
    if (!found.version) throw new InternalError(`backend function '${functionName}' has no deployed version`);
    return {
      description: found.config.description ?? null,
      version: found.version.version,
      gmt_modified: formatTimestamp(new Date(found.version.modifiedAtMs), context.catalog.timeZone),
    };
  },
};
