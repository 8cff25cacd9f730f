/**
 * The configuration file (docs/interface.md §9): one schema that validates the file, gives the code its types and
 * documents the format (its JSON Schema is generated from this module). Cross-references (grants to known
 * datasets, fields that exist, unique codes) are checked here too, so a wrong file is refused at load with
 * every problem listed by path.
 */
// A namespace import, not `{ z }`: esbuild can then drop what is unused (zod's 40 locales alone are ~250 KB per bundle).
import * as z from 'zod';
import {
  CODE_PATTERN,
  FIELD_NAME_PATTERN,
  GRANT_OPERATIONS,
  type GrantOperation,
  isSystemField,
} from '../contract/codes';
import { checkUserReferences } from './user-checks';

export const FIELD_TYPES = [
  'string',
  'text',
  'integer',
  'number',
  'boolean',
  'date',
  'datetime',
  'enum',
  'json',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** How many fields of one dataset can be `indexed`: one per generic index of the records table. */
export const MAX_INDEXED_FIELDS = 5;

/** What a grant may allow (defined with the contract's codes, since every route names the one it needs). */
export const OPERATIONS = GRANT_OPERATIONS;
export type { GrantOperation };

const code = z.string().regex(CODE_PATTERN, 'must be 1 to 64 letters, digits, "_" or "-"');
const fieldName = z
  .string()
  .regex(FIELD_NAME_PATTERN, 'must be letters, digits and "_", starting with a letter or "_" (at most 64)');

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

export const fieldSchema = z
  .object({
    name: fieldName.describe('Field name, used in records, filters and SQL'),
    title: z.string().min(1).optional().describe('Column title in tableColumns; the name when absent'),
    type: z.enum(FIELD_TYPES).describe('Value type, checked on every write'),
    required: z.boolean().optional().describe('Create needs a non-null value; update cannot clear it'),
    indexed: z.boolean().optional().describe('Kept in a generic index, for cheap filters and sorts'),
    options: z.array(z.string()).min(1).optional().describe('Allowed values of an enum field'),
  })
  .strict();

export const datasetSchema = z
  .object({
    appCode: code.describe('The owning application (owning grants nothing: access is through grants)'),
    datasetCode: code.describe('Unique in the deployment'),
    name: z.string().optional(),
    fields: z.array(fieldSchema).min(1),
  })
  .strict();

/** A filter in get-list syntax (docs/interface.md §5): `{"region": "EU", "amount_start": 10}`. */
export const rowFilterSchema = z.record(z.string(), z.unknown());

export const grantSchema = z
  .object({
    datasetCode: code,
    operations: z.array(z.enum(OPERATIONS)).min(1).describe('read (get-list, get-one), create, update'),
    readFields: z.array(fieldName).optional().describe('Only these fields (plus system fields) are visible'),
    writeFields: z.array(fieldName).optional().describe('Only these fields may be written'),
    rowFilter: rowFilterSchema.optional().describe('Rows this application sees and changes, in get-list syntax'),
  })
  .strict();

export const quotaSchema = z
  .object({
    perMinute: z.number().int().positive().optional(),
    perHour: z.number().int().positive().optional(),
    perDay: z.number().int().positive().optional(),
    concurrent: z.number().int().positive().optional(),
  })
  .strict();

const accessKey = z.string().min(8, 'must be at least 8 characters').max(256);

/** A person calling with personal access keys on the `/client/` paths (docs/interface.md §14). */
export const userSchema = z
  .object({
    userId: code.describe('Unique in the application; the `id` of GET /client/user/loginUserInfo'),
    userName: z.string().min(1).max(256),
    loginName: z.string().min(1).max(256),
    role: z.string().min(1).max(64).optional(),
    grants: z
      .array(grantSchema)
      .optional()
      .describe(
        "Only narrow the application's grants: without them the user has the application's; with them only " +
          'these datasets, each the intersection with the application grant (operations, readFields, writeFields) ' +
          "and the application's rowFilter plus the user's",
      ),
    keyHashes: z
      .array(
        z
          .string()
          .regex(
            /^[0-9a-f]{64}$/,
            'must be the lower-case hex SHA-256 digest of a key (das user-key create prints it)',
          ),
      )
      .describe('SHA-256 digests of the personal access keys (never the keys); removing one revokes that key'),
  })
  .strict();

export const applicationSchema = z
  .object({
    appCode: code,
    name: z.string().optional(),
    accessKey: z
      .union([accessKey, z.array(accessKey).min(1).max(2)])
      .optional()
      .describe(
        'Local runs only: the access key, or two during a rotation. A deployment keeps keys in the secret store',
      ),
    signingSecret: z
      .string()
      .min(8)
      .optional()
      .describe("Local runs only: the application's signing secret; the deployment default when absent"),
    quota: quotaSchema.optional(),
    signatureVersion: z
      .union([z.literal(1), z.literal(2)])
      .optional()
      .describe(
        'Signature version the application must use: 1 (default) or 2, which also signs the body, method, path and a single-use nonce',
      ),
    grants: z.array(grantSchema).optional().describe('Without a grant an application reaches nothing'),
    users: z
      .array(userSchema)
      .optional()
      .describe('People who call with personal access keys (X-User-AK) on the /client/ paths'),
  })
  .strict();

export const queryParamSchema = z
  .object({
    type: z.enum(['string', 'number', 'integer', 'boolean']),
    required: z.boolean().optional(),
  })
  .strict();

export const querySchema = z
  .object({
    appCode: code,
    sqlCode: code,
    id: z.number().int().positive().optional().describe('Numeric id, unique in the deployment'),
    name: z.string().optional(),
    sql: z.string().min(1),
    params: z.record(fieldName, queryParamSchema).optional(),
    datasets: z.array(code).optional().describe('Datasets the query reads; each must be readable by the application'),
    timeoutMs: z.number().int().min(10).max(25000).optional(),
  })
  .strict();

/** A backend function (docs/hooks.md): partner JavaScript run in the sandbox. */
export const functionSchema = z
  .object({
    appCode: code,
    name: code.describe('Unique in the deployment; hooks name it'),
    description: z.string().max(500).optional(),
    file: z.string().min(1).optional().describe('A .js file beside the configuration file'),
    source: z
      .string()
      .min(1)
      .optional()
      .describe('The module inline: export default async function name(params, context) {...}'),
    timeoutMs: z.number().int().min(1).max(2000).optional().describe('CPU time per run (default 200)'),
    memoryMb: z.number().int().min(1).max(128).optional().describe('Memory per run (default 32)'),
  })
  .strict()
  .refine((fn) => fn.source !== undefined, {
    message: 'needs `source`, or a `file` beside the configuration',
    path: ['source'],
  });

export const HOOK_OPERATIONS = ['get-list', 'get-one', 'create', 'batch-create', 'update'] as const;

/** Attaches a function before or after a dataset operation. */
export const hookSchema = z
  .object({
    datasetCode: code,
    operation: z.enum(HOOK_OPERATIONS),
    node: z.enum(['before', 'after']),
    function: code,
    appCode: code.optional().describe("Only this application's requests (default: every caller's)"),
  })
  .strict();

export const catalogConfigSchema = z
  .object({
    $schema: z.string().optional(),
    timeZone: z.string().refine(isTimeZone, 'must be an IANA time zone such as "UTC" or "Europe/Berlin"').optional(),
    defaultPageSize: z.number().int().min(1).max(100).optional(),
    defaultSigningSecret: z
      .string()
      .min(8)
      .optional()
      .describe('Local runs only: the default signing secret. A deployment keeps it in the secret store'),
    applications: z.array(applicationSchema),
    datasets: z.array(datasetSchema),
    queries: z.array(querySchema).optional(),
    functions: z.array(functionSchema).optional(),
    hooks: z.array(hookSchema).optional(),
  })
  .strict()
  // Cross-references are checked even when the structure has problems, so that one load lists every problem.
  .superRefine((config, ctx) => checkReferences(tolerant(config), ctx), { when: () => true });

export type FieldConfig = z.infer<typeof fieldSchema>;
export type DatasetConfig = z.infer<typeof datasetSchema>;
export type GrantConfig = z.infer<typeof grantSchema>;
export type QuotaConfig = z.infer<typeof quotaSchema>;
export type ApplicationConfig = z.infer<typeof applicationSchema>;
export type UserConfig = z.infer<typeof userSchema>;
export type QueryConfig = z.infer<typeof querySchema>;
export type QueryParamConfig = z.infer<typeof queryParamSchema>;
export type FunctionConfig = z.infer<typeof functionSchema>;
export type HookConfig = z.infer<typeof hookSchema>;
export type CatalogConfig = z.infer<typeof catalogConfigSchema>;

const FILTER_SUFFIXES = ['_like', '_start', '_end', '_in', '_is_null'] as const;

/** The field a get-list filter key refers to: `amount_start` → `amount`, when such a field exists. */
export function filterKeyField(key: string, knownFields: ReadonlySet<string>): string | undefined {
  if (knownFields.has(key)) return key;
  for (const suffix of FILTER_SUFFIXES) {
    if (key.endsWith(suffix) && knownFields.has(key.slice(0, -suffix.length))) return key.slice(0, -suffix.length);
  }
  return undefined;
}

/**
 * The configuration as the reference checks read it: when the structure has problems the value is the raw
 * input, so lists that are not lists and entries that are not objects are left out here (the structural
 * problems already report them).
 */
function tolerant(raw: unknown): CatalogConfig {
  const objects = (value: unknown): Record<string, unknown>[] =>
    Array.isArray(value) ? value.filter((v) => v !== null && typeof v === 'object' && !Array.isArray(v)) : [];
  const strings = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((v) => typeof v === 'string') : [];
  const text = (value: unknown): string => (typeof value === 'string' ? value : '');
  const root = (raw !== null && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const grants = (value: unknown) =>
    objects(value).map((grant) => ({
      ...grant,
      datasetCode: text(grant.datasetCode),
      operations: strings(grant.operations),
      readFields: grant.readFields === undefined ? undefined : strings(grant.readFields),
      writeFields: grant.writeFields === undefined ? undefined : strings(grant.writeFields),
      rowFilter: objects([grant.rowFilter])[0],
    }));
  return {
    applications: objects(root.applications).map((app) => ({
      ...app,
      appCode: text(app.appCode),
      grants: grants(app.grants),
      users: objects(app.users).map((user) => ({
        ...user,
        userId: text(user.userId),
        grants: user.grants === undefined ? undefined : grants(user.grants),
        keyHashes: strings(user.keyHashes),
      })),
    })),
    datasets: objects(root.datasets).map((dataset) => ({
      ...dataset,
      appCode: text(dataset.appCode),
      datasetCode: text(dataset.datasetCode),
      fields: objects(dataset.fields).map((field) => ({
        ...field,
        name: text(field.name),
        type: field.type as FieldType,
        options: field.options === undefined ? undefined : strings(field.options),
      })),
    })),
    queries: objects(root.queries).map((query) => ({
      ...query,
      appCode: text(query.appCode),
      sqlCode: text(query.sqlCode),
      sql: text(query.sql),
      id: typeof query.id === 'number' ? query.id : undefined,
      params: objects([query.params])[0] as QueryConfig['params'],
      datasets: query.datasets === undefined ? undefined : strings(query.datasets),
    })),
    functions: objects(root.functions).map((fn) => ({ ...fn, appCode: text(fn.appCode), name: text(fn.name) })),
    hooks: objects(root.hooks).map((hook) => ({
      ...hook,
      datasetCode: text(hook.datasetCode),
      function: text(hook.function),
      appCode: hook.appCode === undefined ? undefined : text(hook.appCode),
    })),
  } as CatalogConfig;
}

function checkReferences(config: CatalogConfig, ctx: z.RefinementCtx): void {
  const problem = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  const datasets = new Map<string, DatasetConfig>();
  const appCodes = new Set<string>();

  config.applications.forEach((app, i) => {
    if (appCodes.has(app.appCode)) problem(['applications', i, 'appCode'], `duplicate appCode '${app.appCode}'`);
    appCodes.add(app.appCode);
  });

  config.datasets.forEach((dataset, i) => {
    if (datasets.has(dataset.datasetCode)) {
      problem(['datasets', i, 'datasetCode'], `duplicate datasetCode '${dataset.datasetCode}'`);
    }
    datasets.set(dataset.datasetCode, dataset);
    if (!appCodes.has(dataset.appCode)) problem(['datasets', i, 'appCode'], `unknown application '${dataset.appCode}'`);
    const names = new Set<string>();
    let indexed = 0;
    dataset.fields.forEach((field, j) => {
      const at = ['datasets', i, 'fields', j];
      if (isSystemField(field.name))
        problem([...at, 'name'], `'${field.name}' is a system field and cannot be defined`);
      if (names.has(field.name)) problem([...at, 'name'], `duplicate field '${field.name}'`);
      names.add(field.name);
      if (field.type === 'enum' && !field.options) problem([...at, 'options'], 'an enum field needs options');
      if (field.type !== 'enum' && field.options) problem([...at, 'options'], 'only enum fields take options');
      if (field.indexed) {
        indexed += 1;
        if (field.type === 'json' || field.type === 'text') {
          problem([...at, 'indexed'], `a ${field.type} field cannot be indexed`);
        }
      }
    });
    if (indexed > MAX_INDEXED_FIELDS) {
      problem(['datasets', i, 'fields'], `at most ${MAX_INDEXED_FIELDS} fields of a dataset can be indexed`);
    }
  });

  config.applications.forEach((app, i) => {
    const granted = new Set<string>();
    (app.grants ?? []).forEach((grant, j) => {
      const at = ['applications', i, 'grants', j];
      const dataset = datasets.get(grant.datasetCode);
      if (granted.has(grant.datasetCode)) problem([...at, 'datasetCode'], `duplicate grant for '${grant.datasetCode}'`);
      granted.add(grant.datasetCode);
      if (!dataset) {
        problem([...at, 'datasetCode'], `unknown dataset '${grant.datasetCode}'`);
        return;
      }
      const fieldNames = new Set(dataset.fields.map((f) => f.name));
      for (const list of ['readFields', 'writeFields'] as const) {
        grant[list]?.forEach((name, k) => {
          if (!fieldNames.has(name))
            problem([...at, list, k], `unknown field '${name}' of dataset '${dataset.datasetCode}'`);
        });
      }
      const filterable = new Set([...fieldNames, 'id', 'gmt_create', 'gmt_modified']);
      for (const key of Object.keys(grant.rowFilter ?? {})) {
        if (!filterKeyField(key, filterable)) {
          problem([...at, 'rowFilter', key], `unknown field in '${key}' of dataset '${dataset.datasetCode}'`);
        }
      }
    });
  });

  checkUserReferences(config, problem);

  const sqlCodes = new Set<string>();
  const queryIds = new Set<number>();
  (config.queries ?? []).forEach((query, i) => {
    const at = ['queries', i];
    if (!appCodes.has(query.appCode)) problem([...at, 'appCode'], `unknown application '${query.appCode}'`);
    const key = `${query.appCode}/${query.sqlCode}`;
    if (sqlCodes.has(key)) problem([...at, 'sqlCode'], `duplicate sqlCode '${query.sqlCode}' in '${query.appCode}'`);
    sqlCodes.add(key);
    if (query.id !== undefined) {
      if (queryIds.has(query.id)) problem([...at, 'id'], `duplicate query id ${query.id}`);
      queryIds.add(query.id);
    }
    if (/\$\{[^}]*\}/.test(query.sql)) {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the message names the refused syntax
      problem([...at, 'sql'], '${...} splices text into SQL and is refused; use #{name} parameters');
    }
    const declared = new Set(Object.keys(query.params ?? {}));
    for (const match of query.sql.matchAll(/#\{\s*([^}\s]*)\s*\}/g)) {
      const name = match[1] ?? '';
      if (!declared.has(name)) problem([...at, 'sql'], `placeholder #{${name}} has no declared parameter`);
    }
    query.datasets?.forEach((datasetCode, k) => {
      if (!datasets.has(datasetCode)) problem([...at, 'datasets', k], `unknown dataset '${datasetCode}'`);
    });
  });

  const functionNames = new Set<string>();
  (config.functions ?? []).forEach((fn, i) => {
    if (!appCodes.has(fn.appCode)) problem(['functions', i, 'appCode'], `unknown application '${fn.appCode}'`);
    if (functionNames.has(fn.name)) problem(['functions', i, 'name'], `duplicate function '${fn.name}'`);
    functionNames.add(fn.name);
  });
  (config.hooks ?? []).forEach((hook, i) => {
    if (!datasets.has(hook.datasetCode)) problem(['hooks', i, 'datasetCode'], `unknown dataset '${hook.datasetCode}'`);
    if (!functionNames.has(hook.function)) problem(['hooks', i, 'function'], `unknown function '${hook.function}'`);
    if (hook.appCode !== undefined && !appCodes.has(hook.appCode)) {
      problem(['hooks', i, 'appCode'], `unknown application '${hook.appCode}'`);
    }
  });
}
