/** The alphabets of codes and field names (docs/interface.md §6), shared by configuration and request validation. */

/** `appCode`, `datasetCode`, `sqlCode`: 1 to 64 letters, digits, `_` and `-`. */
export const CODE_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Field names: letters, digits and `_`, starting with a letter or `_`. */
export const FIELD_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Fields every record has; the service generates them and a dataset cannot define them. */
export const SYSTEM_FIELDS = ['id', 'gmt_create', 'gmt_modified'] as const;
export type SystemField = (typeof SYSTEM_FIELDS)[number];

export function isSystemField(name: string): name is SystemField {
  return (SYSTEM_FIELDS as readonly string[]).includes(name);
}

export function isCode(value: unknown): value is string {
  return typeof value === 'string' && CODE_PATTERN.test(value);
}

/** What a grant may allow on a dataset; each data operation needs one of them. */
export const GRANT_OPERATIONS = ['read', 'create', 'update'] as const;
export type GrantOperation = (typeof GRANT_OPERATIONS)[number];
