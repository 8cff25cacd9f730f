/**
 * The configuration file (docs/interface.md §9): one schema that validates the file, gives the code its types and
 * documents the format (its JSON Schema is generated from this module). Cross-references (grants to known
 * datasets, fields that exist, unique codes) are checked here too, so a wrong file is refused at load with
 * every problem listed by path.
 */
// zod's tree-shakable form: every operation function validates the catalog it reads with this schema, and the
// classic form would add its whole method-carrying API (about 70 KB) to each function's bundle. A namespace
// import, not `{ z }`: esbuild then drops what is unused (zod's 40 locales alone are ~250 KB per bundle).
import * as z from 'zod/mini';
import { CHANGE_EVENT_TYPES, WEBHOOK_SECRET_PREFIX } from '../../packages/client/src/change-events';
import {
  CODE_PATTERN,
  FIELD_NAME_PATTERN,
  GRANT_OPERATIONS,
  type GrantOperation,
  isSystemField,
} from '../contract/codes';
import '../contract/zod-messages';
import { checkRelations } from './relation-checks';
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

const code = z.string().check(z.regex(CODE_PATTERN, 'must be 1 to 64 letters, digits, "_" or "-"'));
const fieldName = z
  .string()
  .check(z.regex(FIELD_NAME_PATTERN, 'must be letters, digits and "_", starting with a letter or "_" (at most 64)'));

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/** An object that refuses unknown keys: the classic `.strict()`, a copy whose catch-all is `never`. */
function strict<T extends z.ZodMiniObject>(schema: T): z.ZodMiniObject<T['shape'], z.core.$strict> {
  // The type `strictObject` gives; the value the classic `.strict()` makes (a copy of the object schema).
  return z.catchall(schema, z.never()) as unknown as z.ZodMiniObject<T['shape'], z.core.$strict>;
}

export const fieldSchema = strict(
  z.object({
    name: fieldName.check(z.describe('Field name, used in records, filters and SQL')),
    title: z
      .optional(z.string().check(z.minLength(1)))
      .check(z.describe('Column title in tableColumns; the name when absent')),
    type: z.enum(FIELD_TYPES).check(z.describe('Value type, checked on every write')),
    required: z.optional(z.boolean()).check(z.describe('Create needs a non-null value; update cannot clear it')),
    indexed: z.optional(z.boolean()).check(z.describe('Kept in a generic index, for cheap filters and sorts')),
    options: z.optional(z.array(z.string()).check(z.minLength(1))).check(z.describe('Allowed values of an enum field')),
  }),
);

/** A many-to-one link from `field` to the `id` of a record of `dataset` (docs/interface.md §21). */
export const relationSchema = strict(
  z.object({
    name: fieldName.check(z.describe('The name get-list uses: select, where and orderBy take <name>.<field>')),
    field: fieldName.check(z.describe('A string or text field of this dataset holding the related record id')),
    dataset: code.check(z.describe('The related dataset')),
  }),
);

export const datasetSchema = strict(
  z.object({
    appCode: code.check(z.describe('The owning application (owning grants nothing: access is through grants)')),
    datasetCode: code.check(z.describe('Unique in the deployment')),
    name: z.optional(z.string()),
    fields: z.array(fieldSchema).check(z.minLength(1)),
    relations: z
      .optional(z.array(relationSchema))
      .check(z.describe('Many-to-one links to other datasets, read on get-list as <name>.<field>')),
  }),
);

/** A filter in get-list syntax (docs/interface.md §5): `{"region": "EU", "amount_start": 10}`. */
export const rowFilterSchema = z.record(z.string(), z.unknown());

export const grantSchema = strict(
  z.object({
    datasetCode: code,
    operations: z
      .array(z.enum(OPERATIONS))
      .check(z.minLength(1))
      .check(z.describe('read (get-list, get-one), create, update')),
    readFields: z.optional(z.array(fieldName)).check(z.describe('Only these fields (plus system fields) are visible')),
    writeFields: z.optional(z.array(fieldName)).check(z.describe('Only these fields may be written')),
    rowFilter: z
      .optional(rowFilterSchema)
      .check(z.describe('Rows this application sees and changes, in get-list syntax')),
  }),
);

/** A positive whole number (the checks in the order the classic `.int().positive()` adds them). */
const positiveInt = () => z.number().check(z.int()).check(z.positive());

export const quotaSchema = strict(
  z.object({
    perMinute: z.optional(positiveInt()),
    perHour: z.optional(positiveInt()),
    perDay: z.optional(positiveInt()),
    concurrent: z.optional(positiveInt()),
  }),
);

const accessKey = z.string().check(z.minLength(8, 'must be at least 8 characters')).check(z.maxLength(256));

/** A person calling with personal access keys on the `/client/` paths (docs/interface.md §14). */
export const userSchema = strict(
  z.object({
    userId: code.check(z.describe('Unique in the application; the `id` of GET /client/user/loginUserInfo')),
    userName: z.string().check(z.minLength(1)).check(z.maxLength(256)),
    loginName: z.string().check(z.minLength(1)).check(z.maxLength(256)),
    role: z.optional(z.string().check(z.minLength(1)).check(z.maxLength(64))),
    grants: z
      .optional(z.array(grantSchema))
      .check(
        z.describe(
          "Only narrow the application's grants: without them the user has the application's; with them only " +
            'these datasets, each the intersection with the application grant (operations, readFields, writeFields) ' +
            "and the application's rowFilter plus the user's",
        ),
      ),
    keyHashes: z
      .array(
        z
          .string()
          .check(
            z.regex(
              /^[0-9a-f]{64}$/,
              'must be the lower-case hex SHA-256 digest of a key (das user-key create prints it)',
            ),
          ),
      )
      .check(z.describe('SHA-256 digests of the personal access keys (never the keys); removing one revokes that key')),
  }),
);

export const applicationSchema = strict(
  z.object({
    appCode: code,
    name: z.optional(z.string()),
    accessKey: z
      .optional(z.union([accessKey, z.array(accessKey).check(z.minLength(1)).check(z.maxLength(2))]))
      .check(
        z.describe(
          'Local runs only: the access key, or two during a rotation. A deployment keeps keys in the secret store',
        ),
      ),
    signingSecret: z
      .optional(z.string().check(z.minLength(8)))
      .check(z.describe("Local runs only: the application's signing secret; the deployment default when absent")),
    quota: z.optional(quotaSchema),
    signatureVersion: z
      .optional(z.union([z.literal(1), z.literal(2)]))
      .check(
        z.describe(
          'Signature version the application must use: 1 (default) or 2, which also signs the body, method, path and a single-use nonce',
        ),
      ),
    grants: z.optional(z.array(grantSchema)).check(z.describe('Without a grant an application reaches nothing')),
    users: z
      .optional(z.array(userSchema))
      .check(z.describe('People who call with personal access keys (X-User-AK) on the /client/ paths')),
  }),
);

export const queryParamSchema = strict(
  z.object({
    type: z.enum(['string', 'number', 'integer', 'boolean']),
    required: z.optional(z.boolean()),
  }),
);

/** A whole number within [min, max] (the checks in the order the classic `.int().min().max()` adds them). */
const intRange = (min: number, max: number) => z.number().check(z.int()).check(z.gte(min)).check(z.lte(max));

export const querySchema = strict(
  z.object({
    appCode: code,
    sqlCode: code,
    id: z.optional(positiveInt()).check(z.describe('Numeric id, unique in the deployment')),
    name: z.optional(z.string()),
    sql: z.string().check(z.minLength(1)),
    params: z.optional(z.record(fieldName, queryParamSchema)),
    datasets: z
      .optional(z.array(code))
      .check(z.describe('Datasets the query reads; each must be readable by the application')),
    timeoutMs: z.optional(intRange(10, 25000)),
  }),
);

/** A backend function (docs/hooks.md): partner JavaScript run in the sandbox. */
export const functionSchema = strict(
  z.object({
    appCode: code,
    name: code.check(z.describe('Unique in the deployment; hooks name it')),
    description: z.optional(z.string().check(z.maxLength(500))),
    file: z.optional(z.string().check(z.minLength(1))).check(z.describe('A .js file beside the configuration file')),
    source: z
      .optional(z.string().check(z.minLength(1)))
      .check(z.describe('The module inline: export default async function name(params, context) {...}')),
    timeoutMs: z.optional(intRange(1, 2000)).check(z.describe('CPU time per run (default 200)')),
    memoryMb: z.optional(intRange(1, 128)).check(z.describe('Memory per run (default 32)')),
  }),
).check(
  z.refine((fn) => fn.source !== undefined, {
    message: 'needs `source`, or a `file` beside the configuration',
    path: ['source'],
  }),
);

export const HOOK_OPERATIONS = ['get-list', 'get-one', 'create', 'batch-create', 'update'] as const;

/** Attaches a function before or after a dataset operation. */
export const hookSchema = strict(
  z.object({
    datasetCode: code,
    operation: z.enum(HOOK_OPERATIONS),
    node: z.enum(['before', 'after']),
    function: code,
    appCode: z.optional(code).check(z.describe("Only this application's requests (default: every caller's)")),
  }),
);

/** How long change events are kept (docs/interface.md §18): the feed's reach back, and the webhooks' replay window. */
export const DEFAULT_CHANGE_RETENTION_DAYS = 30;
export const MAX_CHANGE_RETENTION_DAYS = 35;

/** A webhook subscription's local signing secret: `whsec_` and base64 of 24 to 64 random bytes. */
function isWebhookSecret(value: string): boolean {
  if (!value.startsWith(WEBHOOK_SECRET_PREFIX)) return false;
  const encoded = value.slice(WEBHOOK_SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return false;
  const bytes = Buffer.from(encoded, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}

/** A webhook subscription (docs/interface.md §18): the change events of some datasets, pushed to one URL. */
export const webhookSchema = strict(
  z.object({
    id: code.check(z.describe('Unique in the deployment; `das webhooks status|replay --id` names it')),
    appCode: code.check(z.describe('The application whose grants the events are narrowed through; it needs read')),
    url: z
      .string()
      .check(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }))
      .check(
        z.describe(
          'Where events are POSTed: https in a deployment, which also refuses private, loopback and link-local ' +
            'addresses; http is allowed locally',
        ),
      ),
    datasets: z
      .array(code)
      .check(z.minLength(1))
      .check(z.describe("Datasets whose changes are sent; the application's grant must allow read on each")),
    types: z
      .optional(z.array(z.enum(CHANGE_EVENT_TYPES)).check(z.minLength(1)))
      .check(z.describe('Only these event types (default: all)')),
    secret: z
      .optional(
        z
          .string()
          .check(
            z.refine(
              isWebhookSecret,
              'must be whsec_ followed by base64 of 24 to 64 random bytes (e.g. whsec_ and the output of openssl rand -base64 32)',
            ),
          ),
      )
      .check(
        z.describe(
          'Local runs only: the signing secret. A deployment generates one per subscription in the secret store',
        ),
      ),
  }),
);

export const catalogConfigSchema = strict(
  z.object({
    $schema: z.optional(z.string()),
    timeZone: z.optional(
      z.string().check(z.refine(isTimeZone, 'must be an IANA time zone such as "UTC" or "Europe/Berlin"')),
    ),
    defaultPageSize: z.optional(intRange(1, 100)),
    defaultSigningSecret: z
      .optional(z.string().check(z.minLength(8)))
      .check(z.describe('Local runs only: the default signing secret. A deployment keeps it in the secret store')),
    applications: z.array(applicationSchema),
    datasets: z.array(datasetSchema),
    queries: z.optional(z.array(querySchema)),
    functions: z.optional(z.array(functionSchema)),
    hooks: z.optional(z.array(hookSchema)),
    changeRetentionDays: z
      .optional(intRange(1, MAX_CHANGE_RETENTION_DAYS))
      .check(z.describe('How many days change events are kept for the feed and webhook replays (default 30)')),
    webhooks: z.optional(z.array(webhookSchema)).check(z.describe('Subscriptions that receive change events')),
  }),
)
  // Cross-references are checked even when the structure has problems, so that one load lists every problem.
  .check(z.superRefine((config, ctx) => checkReferences(tolerant(config), ctx), { when: () => true }));

export type FieldConfig = z.infer<typeof fieldSchema>;
export type DatasetConfig = z.infer<typeof datasetSchema>;
export type RelationConfig = z.infer<typeof relationSchema>;
export type GrantConfig = z.infer<typeof grantSchema>;
export type QuotaConfig = z.infer<typeof quotaSchema>;
export type ApplicationConfig = z.infer<typeof applicationSchema>;
export type UserConfig = z.infer<typeof userSchema>;
export type QueryConfig = z.infer<typeof querySchema>;
export type QueryParamConfig = z.infer<typeof queryParamSchema>;
export type FunctionConfig = z.infer<typeof functionSchema>;
export type HookConfig = z.infer<typeof hookSchema>;
export type WebhookConfig = z.infer<typeof webhookSchema>;
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
      relations:
        dataset.relations === undefined
          ? undefined
          : objects(dataset.relations).map((relation) => ({
              name: text(relation.name),
              field: text(relation.field),
              dataset: text(relation.dataset),
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
    webhooks: objects(root.webhooks).map((webhook) => ({
      ...webhook,
      id: text(webhook.id),
      appCode: text(webhook.appCode),
      datasets: strings(webhook.datasets),
    })),
  } as CatalogConfig;
}

function checkReferences(config: CatalogConfig, ctx: z.core.$RefinementCtx): void {
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

  checkRelations(config.datasets, problem);

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

  checkWebhookReferences(config, datasets, problem);
}

/**
 * Each webhook's application exists and may read every dataset it subscribes to (events are narrowed through
 * that grant, so a subscription without read could only ever send nothing, or too much).
 */
function checkWebhookReferences(
  config: CatalogConfig,
  datasets: ReadonlyMap<string, DatasetConfig>,
  problem: (path: (string | number)[], message: string) => void,
): void {
  const apps = new Map(config.applications.map((app) => [app.appCode, app]));
  const ids = new Set<string>();
  (config.webhooks ?? []).forEach((webhook, i) => {
    const at = ['webhooks', i];
    if (ids.has(webhook.id)) problem([...at, 'id'], `duplicate webhook id '${webhook.id}'`);
    ids.add(webhook.id);
    const app = apps.get(webhook.appCode);
    if (!app) {
      problem([...at, 'appCode'], `unknown application '${webhook.appCode}'`);
      return;
    }
    const seen = new Set<string>();
    webhook.datasets.forEach((datasetCode, k) => {
      if (seen.has(datasetCode)) problem([...at, 'datasets', k], `duplicate dataset '${datasetCode}'`);
      seen.add(datasetCode);
      if (!datasets.has(datasetCode)) {
        problem([...at, 'datasets', k], `unknown dataset '${datasetCode}'`);
        return;
      }
      const grant = (app.grants ?? []).find((g) => g.datasetCode === datasetCode);
      if (!grant?.operations.includes('read')) {
        problem(
          [...at, 'datasets', k],
          `application '${webhook.appCode}' may not read dataset '${datasetCode}': a webhook sends only what its application may read`,
        );
      }
    });
  });
}
