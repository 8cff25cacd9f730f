/**
 * The wire shapes of every operation (docs/interface.md §1, §2, §4, §5, §8), written once as zod schemas. They feed
 * the OpenAPI document, give the TypeScript client its types, and validate the request envelope in the
 * pipeline (`paramMap`, the body codes). The business parameters inside `paramMap` keep their hand-written
 * checks in `shared/operations`, whose messages name the contract's rules; these schemas describe them.
 */
// zod's tree-shakable form, as in catalog/schema.ts: the functions check request bodies with these schemas, and
// the classic form would add its whole method-carrying API to every bundle. A namespace import, so that esbuild
// drops what is unused.
import * as z from 'zod/mini';
import { CODE_PATTERN } from './codes';
import './zod-messages';
import { ErrorCode, type ErrorCodeValue, httpStatusFor } from './errors';
import type { OperationName } from './routes';

/** `appCode`, `datasetCode`, `sqlCode`: the alphabet of docs/interface.md §6. */
export const codeSchema = z
  .string()
  .check(z.regex(CODE_PATTERN, 'must be 1 to 64 letters, digits, "_" or "-"'))
  .check(z.describe('1 to 64 letters, digits, "_" or "-"'));

/** The business parameters of a data operation: a JSON object. */
export const paramMapSchema = z.record(z.string(), z.unknown());

export const recordIdSchema = z.union([z.string().check(z.minLength(1)).check(z.maxLength(128)), z.number()]).check(
  z.meta({
    description: 'Record id: a string (a time-ordered ULID) or a number; either form is accepted back',
    examples: ['01JD5Y0RZ6W8Q4N3V2M1K0H9G8'],
  }),
);

/** `YYYY-MM-DD HH:MM:SS` in the configuration's time zone. */
const timestampText = z.string().check(z.regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/));

export const dataRecordSchema = z
  .catchall(
    z.object({
      id: recordIdSchema,
      gmt_create: timestampText.check(
        z.meta({
          description: 'Creation time, YYYY-MM-DD HH:MM:SS, set by the service',
          examples: ['2024-05-01 09:30:00'],
        }),
      ),
      gmt_modified: timestampText.check(
        z.meta({
          description: 'Last change, YYYY-MM-DD HH:MM:SS, set by the service',
          examples: ['2024-05-02 14:05:12'],
        }),
      ),
    }),
    z.unknown(),
  )
  .check(z.describe('A record: the system fields plus the dataset-defined fields the grant lets the caller read'));

export const sortEntrySchema = z
  .record(z.string(), z.enum(['asc', 'desc']))
  .check(z.describe('One key, the field name, mapped to asc or desc'));

export const getListParamsSchema = z
  .catchall(
    z.object({
      currentPage: z.optional(z.int().check(z.gte(1))).check(z.describe('Page number, from 1 (default 1)')),
      pageSize: z
        .optional(z.int().check(z.gte(1)))
        .check(z.describe('Records per page (default 20, configurable); above 100 is served as 100')),
      ytSortList: z
        .optional(z.array(sortEntrySchema))
        .check(z.describe('Sort order; earlier entries win. Default: newest first. Ties are broken by id')),
      where: z
        .optional(z.record(z.string(), z.unknown()))
        .check(
          z.describe(
            'Structured filter: $eq $ne $gt $gte $lt $lte $contain $startWith $endWith $in $notNull, $and, $or',
          ),
        ),
      select: z.optional(z.array(z.string())).check(z.describe('Field names that narrow tableData')),
    }),
    z.unknown(),
  )
  .check(
    z.meta({
      description:
        'Paging, sorting and filters, combined with AND: <field> (equals), <field>_like, <field>_start, <field>_end, <field>_in, <field>_is_null',
      examples: [{ currentPage: 1, pageSize: 10, ytSortList: [{ amount: 'desc' }], status: 'new', amount_start: 10 }],
    }),
  );

export const getOneParamsSchema = z.catchall(z.object({ id: recordIdSchema }), z.unknown());

export const createParamsSchema = z.record(z.string(), z.unknown()).check(
  z.meta({
    description: 'The dataset fields of the new record; system fields sent are ignored',
    examples: [{ customer_id: 'c-1', amount: 12.5, status: 'new' }],
  }),
);

export const batchCreateListSchema = z
  .array(createParamsSchema)
  .check(z.minLength(1))
  .check(z.maxLength(1000))
  .check(
    z.meta({
      description:
        'The new records, 1 to 1000, each as create takes it. All are checked before any is written; a failure names its position (paramList[3]: ...)',
      examples: [
        [
          { customer_id: 'c-1', amount: 12.5, status: 'new' },
          { customer_id: 'c-2', amount: 40, status: 'new' },
        ],
      ],
    }),
  );

export const batchCreateResultSchema = z
  .array(recordIdSchema)
  .check(z.describe('The ids of the new records, in the order of paramList'));

export const updateParamsSchema = z.catchall(z.object({ id: recordIdSchema }), z.unknown()).check(
  z.meta({
    description: 'id plus only the fields to change; null clears an optional field',
    examples: [{ id: '01JD5Y0RZ6W8Q4N3V2M1K0H9G8', status: 'paid' }],
  }),
);

const envelopeCodes = {
  appCode: codeSchema.check(
    z.meta({ description: 'The application code; equal to X-App-Code', examples: ['app-demo'] }),
  ),
  datasetCode: codeSchema.check(
    z.meta({ description: 'The dataset code; equal to X-Dataset-Code', examples: ['orders'] }),
  ),
};

/** The request body of a data operation around its `paramMap`. */
function dataRequestSchema<P extends z.ZodMiniType>(paramMap: P, optional: boolean) {
  return z.object({ ...envelopeCodes, paramMap: optional ? z.optional(paramMap) : paramMap });
}

export const getListRequestSchema = dataRequestSchema(getListParamsSchema, true);
export const getOneRequestSchema = dataRequestSchema(getOneParamsSchema, false);
export const createRequestSchema = dataRequestSchema(createParamsSchema, false);
export const updateRequestSchema = dataRequestSchema(updateParamsSchema, false);
export const batchCreateRequestSchema = z.object({ ...envelopeCodes, paramList: batchCreateListSchema });

export const sqlParamValueSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const executeSqlCommon = {
  appCode: envelopeCodes.appCode,
  datasetCode: z
    .optional(codeSchema)
    .check(z.meta({ description: 'Optional; signed like any other when sent', examples: ['orders'] })),
  params: z.optional(z.record(z.string(), sqlParamValueSchema)).check(
    z.meta({
      description: "Values of the query's declared #{name} parameters",
      examples: [{ since: '2024-01-01 00:00:00' }],
    }),
  ),
};

export const executeSqlRequestSchema = z.union([
  z
    .object({
      ...executeSqlCommon,
      sqlCode: codeSchema.check(z.meta({ description: 'The registered query', examples: ['revenue-by-status'] })),
    })
    .check(
      z.meta({
        title: 'By sqlCode',
        examples: [{ appCode: 'app-demo', sqlCode: 'revenue-by-status', params: { since: '2024-01-01 00:00:00' } }],
      }),
    ),
  z
    .object({
      ...executeSqlCommon,
      id: z.int().check(z.positive()).check(z.describe('The numeric id of the registered query')),
    })
    .check(z.meta({ title: 'By numeric id' })),
]);

export const tableColumnSchema = z.object({
  title: z.string().check(z.describe("The field's title, else its name")),
  dataIndex: z.string().check(z.describe('The field name')),
});

export const listResultSchema = z.object({
  paging: z.object({
    pageSize: z.int().check(z.meta({ description: 'Records per page as served (at most 100)', examples: [10] })),
    totalCount: z.int().check(z.meta({ description: 'Exact number of records matching the filters', examples: [42] })),
    currentPage: z.int().check(z.meta({ description: 'From 1', examples: [1] })),
  }),
  tableData: z.array(dataRecordSchema),
  tableColumns: z.array(tableColumnSchema),
});

export const sqlResultSchema = z.object({
  execSuccess: z.boolean(),
  execResult: z.optional(z.array(z.record(z.string(), z.unknown()))).check(z.describe('Rows; present on success')),
  execError: z.optional(z.string()).check(z.describe('Why the SQL failed; present on failure')),
});

/** GET /client/user/loginUserInfo: the user a personal access key belongs to (docs/interface.md §14). */
export const loginUserInfoSchema = z.object({
  id: z.string().check(z.describe("The user's userId")),
  userName: z.string(),
  loginName: z.string(),
  appCode: z.string().check(z.describe('The application the key belongs to')),
  role: z.nullable(z.string()).check(z.describe("The user's role; null when the configuration gives none")),
});

export function successEnvelopeSchema<D extends z.ZodMiniType>(data: D) {
  return z.object({ success: z.literal(true), msg: z.nullable(z.string()), data });
}

const ERROR_CODES = Object.values(ErrorCode) as ErrorCodeValue[];

/** The failure envelope; `codes` narrows `errorCode` (e.g. to those of one HTTP status). */
export function failureEnvelopeSchema(codes: readonly ErrorCodeValue[] = ERROR_CODES) {
  return z.object({
    success: z.literal(false),
    msg: z.null(),
    data: z.null(),
    errorCode: z.literal(codes).check(z.describe('The contract error code')),
    errorMsg: z.string().check(z.describe('What is wrong, in words a caller can act on')),
  });
}

export const failureEnvelope = failureEnvelopeSchema();

/** The error codes each operation can answer, in contract order. */
const COMMON_CODES: ErrorCodeValue[] = [1001, 1002, 1003, 1004, 2001, 3001, 4001];
const DATA_CODES: ErrorCodeValue[] = [...COMMON_CODES, 1005, 1006];

export interface OperationSchemas {
  request: z.ZodMiniType;
  data: z.ZodMiniType;
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
    data: dataRecordSchema,
    errorCodes: [...DATA_CODES, 2002],
    summary: 'Partial update of one record: only the fields sent change',
  },
  'execute-sql': {
    request: executeSqlRequestSchema,
    data: sqlResultSchema,
    errorCodes: COMMON_CODES,
    summary: 'Run a registered SQL query over the datasets the caller may read',
  },
  'login-user-info': {
    // A GET without a body: the personal access key alone says who is calling.
    request: z.object({}),
    data: loginUserInfoSchema,
    errorCodes: [1002, 3001, 4001],
    summary: 'The user a personal access key belongs to',
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
export type ListResult = z.infer<typeof listResultSchema>;
export type SqlParamValue = z.infer<typeof sqlParamValueSchema>;
export type ExecuteSqlRequest = z.input<typeof executeSqlRequestSchema>;
export type SqlResult = z.infer<typeof sqlResultSchema>;
export type LoginUserInfo = z.infer<typeof loginUserInfoSchema>;
export type FailureEnvelope = z.infer<typeof failureEnvelope>;
