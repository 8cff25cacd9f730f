/**
 * A query's text uses something the dialect does not accept (docs/interface.md §19). `kind` says what: a
 * construct outside the accepted list (the message names it), a syntax error, or a name that does not resolve
 * (an unknown or hidden table or column). `position` is where in the text it starts, when known. Every kind is
 * refused when the configuration loads; only a name the caller may not see is ever met at run time.
 */
export type DialectErrorKind = 'construct' | 'syntax' | 'name';

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
