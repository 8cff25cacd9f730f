/**
 * A query's text uses something the dialect does not accept (docs/interface.md §19). `kind` says what: a
 * construct outside the accepted list (the message names it), a syntax error, a name that does not resolve
 * (an unknown or hidden table or column), or a query MySQL 8 itself refuses (the message is MySQL's, such as
 * its ONLY_FULL_GROUP_BY refusal). `position` is where in the text it starts, when known. Every kind is refused
 * when the configuration loads; only a name the caller may not see is met in a caller's rendering (a query of a
 * configuration an earlier release applied is checked again before it first runs: `queryRunProblem`).
 */
export type DialectErrorKind = 'construct' | 'syntax' | 'name' | 'mysql';

export class DialectError extends Error {
  constructor(
    message: string,
    readonly position?: number,
    readonly kind: DialectErrorKind = 'construct',
  ) {
    super(message);
    this.name = 'DialectError';
  }
}
