/**
 * The wire shapes of every operation (docs/interface.md §1, §2, §4, §5, §8), written once as zod schemas. They feed
 * the OpenAPI document, give the TypeScript client its types, and validate the request envelope in the
 * pipeline (`paramMap`, the body codes: body-schemas.ts, re-exported here). The business parameters inside
 * `paramMap` keep their hand-written checks in `shared/operations`, whose messages name the contract's rules;
 * these schemas describe them. No function bundles this module: it is for the OpenAPI document and the types.
 */
import * as z from 'zod';
import { CHANGE_EVENT_TYPES } from '../../packages/client/src/change-events';
import { codeSchema, paramMapSchema } from './body-schemas';
import { ErrorCode, type ErrorCodeValue, httpStatusFor } from './errors';
import type { OperationName } from './routes';

export { codeSchema, paramMapSchema };

export const recordIdSchema = z.union([z.string().min(1).max(128), z.number()]).meta({
  description: 'Record id: a string (a time-ordered ULID) or a number; either form is accepted back',
  examples: ['01JD5Y0RZ6W8Q4N3V2M1K0H9G8'],
});

/** `YYYY-MM-DD HH:MM:SS` in the configuration's time zone. */
const timestampText = z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);

export const dataRecordSchema = z
  .object({
    id: recordIdSchema,
    gmt_create: timestampText.meta({
      description: 'Creation time, YYYY-MM-DD HH:MM:SS, set by the service',
      examples: ['2024-05-01 09:30:00'],
    }),
    gmt_modified: timestampText.meta({
      description: 'Last change, YYYY-MM-DD HH:MM:SS, set by the service',
      examples: ['2024-05-02 14:05:12'],
    }),
  })
  .catchall(z.unknown())
  .describe('A record: the system fields plus the dataset-defined fields the grant lets the caller read');

export const sortEntrySchema = z
  .record(z.string(), z.enum(['asc', 'desc']))
  .describe('One key, the field name (or <relation>.<field>), mapped to asc or desc');

export const orderByEntrySchema = z
  .record(
    z.string(),
    z
      .string()
      .regex(/^(asc|desc)$/i)
      .meta({ examples: ['DESC'] }),
  )
  .describe('One key, the field name, mapped to asc or desc in any letter case');

export const getListParamsSchema = z
  .object({
    currentPage: z.int().min(1).optional().describe('Page number, from 1 (default 1)'),
    pageSize: z
      .int()
      .min(1)
      .optional()
      .describe('Records per page (default 20, configurable); above 100 is served as 100'),
    page: z
      .int()
      .min(1)
      .optional()
      .describe('Read as currentPage when currentPage is absent (the platform SDK sends it)'),
    ytSortList: z
      .array(sortEntrySchema)
      .optional()
      .describe('Sort order; earlier entries win. Default: newest first. Ties are broken by id'),
    orderBy: z
      .array(orderByEntrySchema)
      .optional()
      .describe(
        'The same sort as ytSortList, as the platform SDK sends it (direction in any letter case); not with ytSortList',
      ),
    where: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'Structured filter: $eq $ne $gt $gte (or $gteq) $lt $lte (or $lteq) $contain $startWith $endWith $in $notNull, $and, $or; a key may name a related field, <relation>.<field>',
      ),
    select: z
      .array(z.string())
      .optional()
      .describe(
        'Field names that narrow tableData; <relation>.<field> adds a related field, nested under the relation name (null when there is no related record to show)',
      ),
  })
  .catchall(z.unknown())
  .meta({
    description:
      'Paging, sorting and filters, combined with AND: <field> (equals), <field>_like, <field>_start, <field>_end, <field>_in, <field>_is_null',
    examples: [{ currentPage: 1, pageSize: 10, ytSortList: [{ amount: 'desc' }], status: 'new', amount_start: 10 }],
  });

export const getOneParamsSchema = z.object({ id: recordIdSchema }).catchall(z.unknown());

export const createParamsSchema = z.record(z.string(), z.unknown()).meta({
  description: 'The dataset fields of the new record; system fields sent are ignored',
  examples: [{ customer_id: 'c-1', amount: 12.5, status: 'new' }],
});

export const batchCreateListSchema = z
  .array(createParamsSchema)
  .min(1)
  .max(1000)
  .meta({
    description:
      'The new records, 1 to 1000, each as create takes it. All are checked before any is written; a failure names its position (paramList[3]: ...)',
    examples: [
      [
        { customer_id: 'c-1', amount: 12.5, status: 'new' },
        { customer_id: 'c-2', amount: 40, status: 'new' },
      ],
    ],
  });

export const batchCreateResultSchema = z
  .array(recordIdSchema)
  .describe('The ids of the new records, in the order of paramList');

export const updateParamsSchema = z
  .object({
    id: z.union([
      recordIdSchema,
      z
        .array(recordIdSchema)
        .min(1)
        .max(1000)
        .describe('A batch update: 1 to 1000 ids (or one text of comma-separated ids), changed all or nothing'),
    ]),
  })
  .catchall(z.unknown())
  .meta({
    description:
      'id plus only the fields to change; null clears an optional field. With a list of ids, every record changes or none does',
    examples: [
      { id: '01JD5Y0RZ6W8Q4N3V2M1K0H9G8', status: 'paid' },
      { id: ['01JD5Y0RZ6W8Q4N3V2M1K0H9G8', '01JD5Y0RZ6W8Q4N3V2M1K0H9G9'], status: 'paid' },
    ],
  });

export const batchUpdateResultSchema = z
  .object({
    ids: z.array(recordIdSchema).describe('The ids, in the order sent'),
    total: z.number().int().describe('How many records the batch listed'),
  })
  .describe('A batch update: every listed record now holds the change');

const envelopeCodes = {
  // codeSchema is a zod/mini schema (body-schemas.ts): metadata is added as a check.
  appCode: codeSchema.check(
    z.meta({ description: 'The application code; equal to X-App-Code', examples: ['app-demo'] }),
  ),
  datasetCode: codeSchema.check(
    z.meta({ description: 'The dataset code; equal to X-Dataset-Code', examples: ['orders'] }),
  ),
};

/** The request body of a data operation around its `paramMap`. */
function dataRequestSchema<P extends z.ZodType>(paramMap: P, optional: boolean) {
  return z.object({ ...envelopeCodes, paramMap: optional ? paramMap.optional() : paramMap });
}

export const getListRequestSchema = dataRequestSchema(getListParamsSchema, true);
export const getOneRequestSchema = dataRequestSchema(getOneParamsSchema, false);
export const createRequestSchema = dataRequestSchema(createParamsSchema, false);
export const updateRequestSchema = dataRequestSchema(updateParamsSchema, false);
export const batchCreateRequestSchema = z.object({ ...envelopeCodes, paramList: batchCreateListSchema });

const aggregateItemSchema = z
  .object({
    type: z
      .string()
      .regex(/^(SUM|AVG|COUNT|MAX|MIN)$/i)
      .meta({ description: 'SUM, AVG, COUNT, MAX or MIN, in any letter case', examples: ['SUM'] }),
    column: z
      .string()
      .optional()
      .meta({ description: 'The field measured; COUNT without it counts records', examples: ['amount'] }),
    field: z
      .string()
      .optional()
      .meta({ description: 'The old name of column', examples: ['amount'] }),
    alias: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/)
      .optional()
      .meta({ description: 'The output name (default: type_column in lower case, or count)', examples: ['total'] }),
    distinct: z.boolean().optional().describe('Measure distinct values only'),
    round: z.boolean().optional().describe('Round the value to precision decimals (precision is then required)'),
    precision: z.int().min(0).max(10).optional().describe('Decimals kept when round is true'),
  })
  .describe('One measure');

export const aggregateParamsSchema = z
  .object({
    aggregate: z.array(aggregateItemSchema).min(1).max(20).describe('1 to 20 measures'),
    groupBy: z.array(z.string()).optional().describe('Fields whose values make the groups; none: one group'),
    having: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Which groups are kept: the where shape over the groupBy fields and the aliases'),
    orderBy: z
      .array(orderByEntrySchema)
      .optional()
      .describe('Order of the groups, over the groupBy fields and the aliases; then by the groupBy fields'),
    where: z.record(z.string(), z.unknown()).optional().describe("The records measured, as get-list's where"),
    currentPage: z.int().min(1).optional().describe('Page of groups, from 1 (default 1); page is read when absent'),
    pageSize: z.int().min(1).optional().describe('Groups per page (default 20); above 100 is served as 100'),
  })
  .catchall(z.unknown())
  .meta({
    description: "Measures over the records the caller may read; get-list's suffix filters narrow them too",
    examples: [
      {
        aggregate: [
          { type: 'SUM', column: 'amount', alias: 'total' },
          { type: 'COUNT', alias: 'orders' },
        ],
        groupBy: ['status'],
        having: { orders: { $gte: 2 } },
        orderBy: [{ total: 'desc' }],
        currentPage: 1,
        pageSize: 20,
      },
    ],
  });

export const aggregateRequestSchema = dataRequestSchema(aggregateParamsSchema, false);

export const sqlParamValueSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const executeSqlCommon = {
  appCode: envelopeCodes.appCode,
  datasetCode: z
    .optional(codeSchema)
    .meta({ description: 'Optional; signed like any other when sent', examples: ['orders'] }),
  params: z
    .record(z.string(), sqlParamValueSchema)
    .optional()
    .meta({
      description: "Values of the query's declared #{name} parameters",
      examples: [{ since: '2024-01-01 00:00:00' }],
    }),
};

export const executeSqlRequestSchema = z.union([
  z
    .object({
      ...executeSqlCommon,
      sqlCode: z.union([
        codeSchema.check(z.meta({ description: 'The registered query', examples: ['revenue-by-status'] })),
        z
          .int()
          .positive()
          .describe("The registered query's numeric id (digits as text name it too, when no query has that code)"),
      ]),
    })
    .meta({
      title: 'By sqlCode',
      examples: [{ appCode: 'app-demo', sqlCode: 'revenue-by-status', params: { since: '2024-01-01 00:00:00' } }],
    }),
  z
    .object({ ...executeSqlCommon, id: z.int().positive().describe('The numeric id of the registered query') })
    .meta({ title: 'By numeric id' }),
]);

export const tableColumnSchema = z.object({
  title: z.string().describe("The field's title, else its name"),
  dataIndex: z.string().describe('The field name'),
});

export const listResultSchema = z.object({
  paging: z.object({
    pageSize: z.int().meta({ description: 'Records per page as served (at most 100)', examples: [10] }),
    totalCount: z.int().meta({ description: 'Exact number of records matching the filters', examples: [42] }),
    currentPage: z.int().meta({ description: 'From 1', examples: [1] }),
  }),
  tableData: z.array(dataRecordSchema),
  tableColumns: z.array(tableColumnSchema),
});

export const aggregateResultSchema = z.object({
  paging: z.object({
    pageSize: z.int().meta({ description: 'Groups per page as served (at most 100)', examples: [20] }),
    totalCount: z.int().meta({ description: 'Exact number of groups', examples: [3] }),
    currentPage: z.int().meta({ description: 'From 1', examples: [1] }),
  }),
  tableData: z
    .array(z.record(z.string(), z.unknown()))
    .describe('One row per group: the groupBy fields, then each measure by its alias'),
  tableColumns: z.array(tableColumnSchema),
});

export const sqlResultSchema = z.object({
  execSuccess: z.boolean(),
  execResult: z.array(z.record(z.string(), z.unknown())).optional().describe('Rows; present on success'),
  execError: z.string().optional().describe('Why the SQL failed; present on failure'),
});

/** POST /openapi/data/indexes: the index status of the datasets the caller may read (docs/interface.md §17). */
export const indexesRequestSchema = z.object({
  appCode: envelopeCodes.appCode,
  datasetCode: z
    .optional(codeSchema)
    .meta({ description: 'Only this dataset; signed like any other when sent', examples: ['orders'] }),
});

export const indexStatusSchema = z.object({
  field: z.string().describe('The indexed field'),
  state: z
    .enum(['complete', 'building', 'waiting', 'dropping'])
    .describe(
      'complete: lists use it; building: records stored before are being indexed; waiting: every index slot is ' +
        'taken until a dropped index frees one; dropping: lists no longer use it and its entries are being removed',
    ),
  percent: z.int().min(0).max(100).describe('How far it has come: 100 once complete'),
  recordsDone: z.int().nullable().describe('Records its job has processed so far; null before its job starts'),
  recordsTotal: z.int().nullable().describe('Records the dataset held when its job started; null before it starts'),
  startedAt: timestampText
    .meta({ examples: ['2024-05-01 09:30:00'] })
    .nullable()
    .describe('When its job started: YYYY-MM-DD HH:MM:SS'),
  finishedAt: timestampText
    .meta({ examples: ['2024-05-01 09:31:12'] })
    .nullable()
    .describe('When it became complete: YYYY-MM-DD HH:MM:SS'),
});

export const indexesResultSchema = z.object({
  datasets: z.array(
    z.object({
      datasetCode: z.string(),
      indexes: z.array(indexStatusSchema),
    }),
  ),
});

/** GET /client/user/loginUserInfo: the user a personal access key belongs to (docs/interface.md §14). */
export const loginUserInfoSchema = z.object({
  id: z.string().describe("The user's userId"),
  userName: z.string(),
  loginName: z.string(),
  appCode: z.string().describe('The application the key belongs to'),
  role: z.string().nullable().describe("The user's role; null when the configuration gives none"),
});

/**
 * GET /client/bff/endpoint/{appCode}/{functionName} (docs/interface.md §15): its path parameters, which the
 * pipeline reads as the request of this GET, and the function contract it answers, limited to three fields.
 */
export const bffEndpointRequestSchema = z.object({
  appCode: codeSchema.check(
    z.meta({
      description: "The function's application; the personal access key must belong to it",
      examples: ['app-demo'],
    }),
  ),
  functionName: codeSchema.check(
    z.meta({ description: 'The backend function, as named in the configuration', examples: ['mask-email'] }),
  ),
});

export const bffEndpointSchema = z.object({
  description: z.string().nullable().describe("The function's description; null when the configuration gives none"),
  version: z
    .number()
    .int()
    .min(1)
    .describe('Counts the deployments that changed the function source: 1 for the first, unchanged otherwise'),
  gmt_modified: timestampText.meta({
    description: "When the last change of source was deployed: YYYY-MM-DD HH:MM:SS in the configuration's time zone",
    examples: ['2024-05-02 14:05:12'],
  }),
});

/** A change event (docs/interface.md §18), as the feed answers it and a webhook delivers it. */
export const changeEventSchema = z
  .object({
    eventId: z.string().meta({
      description: 'The same on every delivery and retry of this event: deduplicate by it',
      examples: ['evt_3f9c2b7e81d04a6f9e5b0c1d2a3b4c5d'],
    }),
    type: z
      .enum(CHANGE_EVENT_TYPES)
      .describe(
        'record.created; record.updated; record.left_scope: the change took the record out of the rows the grant reaches',
      ),
    appCode: z.string().describe("The dataset's owner"),
    datasetCode: z.string(),
    id: z.string().describe("The record's id"),
    revision: z.int().min(1).describe("The record's revision after the change (1 for a creation)"),
    occurredAt: z.string().meta({
      description: 'When the change was made: ISO 8601 UTC with milliseconds',
      examples: ['2024-05-02T14:05:12.345Z'],
    }),
    record: dataRecordSchema
      .nullable()
      .describe('The record after the change, as get-one shows it to the reader; null for record.left_scope'),
    changed: z
      .array(z.string())
      .optional()
      .describe('record.updated: the fields the update changed that the reader may read'),
    actor: z.object({
      appCode: z.string().describe('The application that made the change'),
      userId: z.string().nullable().describe('The user of a client-key request; null for a signed one'),
    }),
    requestId: z.string().describe('The X-Request-Id of the request that made the change'),
  })
  .describe('One change of one record, narrowed to what the reader may see');

export const changesParamsSchema = z
  .object({
    after: z
      .string()
      .optional()
      .describe('The cursor of the previous page; without it the feed starts at the oldest kept event'),
    limit: z.int().min(1).max(500).optional().describe('Events per page, 1 to 500 (default 100)'),
  })
  .meta({ examples: [{ limit: 100 }] });

export const changesRequestSchema = z.object({
  appCode: envelopeCodes.appCode,
  datasetCode: z
    .optional(codeSchema)
    .meta({ description: 'Optional: only this dataset (signed like any other when sent)', examples: ['orders'] }),
  paramMap: changesParamsSchema.optional(),
});

export const changesPageSchema = z.object({
  events: z.array(changeEventSchema).describe('Oldest first'),
  cursor: z.string().describe('Send it as after for the next page; valid while its events are kept'),
  hasMore: z.boolean().describe('Whether the feed holds more changes after the cursor now'),
});

export function successEnvelopeSchema<D extends z.ZodType>(data: D) {
  return z.object({ success: z.literal(true), msg: z.string().nullable(), data });
}

const ERROR_CODES = Object.values(ErrorCode) as ErrorCodeValue[];

/** The failure envelope; `codes` narrows `errorCode` (e.g. to those of one HTTP status). */
export function failureEnvelopeSchema(codes: readonly ErrorCodeValue[] = ERROR_CODES) {
  return z.object({
    success: z.literal(false),
    msg: z.null(),
    data: z.null(),
    errorCode: z.literal(codes).describe('The contract error code'),
    errorMsg: z.string().describe('What is wrong, in words a caller can act on'),
  });
}

export const failureEnvelope = failureEnvelopeSchema();

/** The error codes each operation can answer, in contract order. */
const COMMON_CODES: ErrorCodeValue[] = [1001, 1002, 1003, 1004, 2001, 3001, 4001];
const DATA_CODES: ErrorCodeValue[] = [...COMMON_CODES, 1005, 1006];

export interface OperationSchemas {
  request: z.ZodType;
  data: z.ZodType;
  errorCodes: readonly ErrorCodeValue[];
  summary: string;
}

export const OPERATION_SCHEMAS = {
  'get-list': {
    request: getListRequestSchema,
    data: listResultSchema,
    errorCodes: DATA_CODES,
    summary: 'A page of records, filtered and sorted, with the exact total',
  },
  'get-one': {
    request: getOneRequestSchema,
    data: dataRecordSchema,
    errorCodes: [...DATA_CODES, 2002],
    summary: 'One record by id',
  },
  create: {
    request: createRequestSchema,
    data: dataRecordSchema,
    errorCodes: DATA_CODES,
    summary: 'Create one record; id and timestamps are generated',
  },
  'batch-create': {
    request: batchCreateRequestSchema,
    data: batchCreateResultSchema,
    errorCodes: DATA_CODES,
    summary: 'Create 1 to 1000 records in one request; nothing is written when any of them is refused',
  },
  update: {
    request: updateRequestSchema,
    data: z.union([dataRecordSchema, batchUpdateResultSchema]),
    errorCodes: [...DATA_CODES, 2002],
    summary: 'Partial update of one record, or of 1 to 1000 records all or nothing: only the fields sent change',
  },
  'execute-sql': {
    request: executeSqlRequestSchema,
    data: sqlResultSchema,
    errorCodes: COMMON_CODES,
    summary: 'Run a registered SQL query over the datasets the caller may read',
  },
  aggregate: {
    request: aggregateRequestSchema,
    data: aggregateResultSchema,
    errorCodes: [...DATA_CODES, 2001],
    summary: 'SUM, AVG, COUNT, MAX and MIN over the records the caller may read, grouped, filtered and paged',
  },
  changes: {
    request: changesRequestSchema,
    data: changesPageSchema,
    errorCodes: DATA_CODES,
    summary: 'The change feed: events of the datasets the caller may read, oldest first, from a cursor',
  },
  indexes: {
    request: indexesRequestSchema,
    data: indexesResultSchema,
    errorCodes: [...COMMON_CODES, 1005, 1006],
    summary: 'The indexes of the datasets the caller may read, and how far their builds have come',
  },
  'login-user-info': {
    // A GET without a body: the personal access key alone says who is calling.
    request: z.object({}),
    data: loginUserInfoSchema,
    errorCodes: [1002, 3001, 4001],
    summary: 'The user a personal access key belongs to',
  },
  'bff-endpoint': {
    // A GET without a body: the path parameters are its request.
    request: bffEndpointRequestSchema,
    data: bffEndpointSchema,
    errorCodes: [1001, 1002, 1006, 2002, 3001, 4001],
    summary: "A backend function's description, version and modified time",
  },
} as const satisfies Record<OperationName, OperationSchemas>;

/** Error codes grouped by the HTTP status they answer with (docs/interface.md §2). */
export function errorCodesByStatus(codes: readonly ErrorCodeValue[]): Map<number, ErrorCodeValue[]> {
  const byStatus = new Map<number, ErrorCodeValue[]>();
  for (const code of [...codes].sort((a, b) => a - b)) {
    const status = httpStatusFor(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return byStatus;
}

export type DataRecord = z.infer<typeof dataRecordSchema>;
export type SortEntry = z.infer<typeof sortEntrySchema>;
export type GetListParams = z.input<typeof getListParamsSchema>;
export type AggregateParams = z.input<typeof aggregateParamsSchema>;
export type AggregateResult = z.infer<typeof aggregateResultSchema>;
export type ListResult = z.infer<typeof listResultSchema>;
export type SqlParamValue = z.infer<typeof sqlParamValueSchema>;
export type ExecuteSqlRequest = z.input<typeof executeSqlRequestSchema>;
export type SqlResult = z.infer<typeof sqlResultSchema>;
export type LoginUserInfo = z.infer<typeof loginUserInfoSchema>;
export type BffEndpoint = z.infer<typeof bffEndpointSchema>;
export type IndexesResult = z.infer<typeof indexesResultSchema>;
export type ChangeEventShape = z.infer<typeof changeEventSchema>;
export type ChangesPageShape = z.infer<typeof changesPageSchema>;
export type FailureEnvelope = z.infer<typeof failureEnvelope>;
