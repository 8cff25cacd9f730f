/**
 * Quota windows (docs/interface.md §7): calendar minute, hour and day in UTC. A window is named by its kind and its
 * start, and that name is the attribute of the quota item that counts the window's requests
 * (`m#2026-11-22T04:10`, `h#2026-11-22T04`, `d#2026-11-22`). Because the name carries the start, a new window
 * starts counting from zero by itself: no reset write and no timer is ever needed.
 *
 * Epoch milliseconds have no leap seconds and the epoch starts at midnight UTC, so every UTC calendar minute,
 * hour and day starts at a multiple of its length: plain integer arithmetic, no date library.
 */

export type WindowKind = 'minute' | 'hour' | 'day';

/** Shortest first: the order in which windows are written, reported and tie-broken. */
export const WINDOW_KINDS: readonly WindowKind[] = ['minute', 'hour', 'day'];

export const WINDOW_LENGTH_MS: Readonly<Record<WindowKind, number>> = {
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};

const PREFIX: Readonly<Record<WindowKind, string>> = { minute: 'm', hour: 'h', day: 'd' };
/** How much of an ISO-8601 timestamp names the window: `YYYY-MM-DDTHH:MM`, `YYYY-MM-DDTHH`, `YYYY-MM-DD`. */
const NAME_LENGTH: Readonly<Record<WindowKind, number>> = { minute: 16, hour: 13, day: 10 };
/** What completes a window name into a parseable UTC timestamp. */
const NAME_SUFFIX: Readonly<Record<WindowKind, string>> = { minute: ':00Z', hour: ':00:00Z', day: 'T00:00:00Z' };
const KIND_OF_PREFIX: Readonly<Record<string, WindowKind>> = { m: 'minute', h: 'hour', d: 'day' };
const ATTRIBUTE = /^([mhd])#(\d{4}-\d{2}-\d{2}(?:T\d{2}(?::\d{2})?)?)$/;

export interface QuotaWindow {
  kind: WindowKind;
  /** Epoch ms of the window's first instant. */
  start: number;
  /** Epoch ms of the next window's first instant. */
  end: number;
  /** The quota item attribute that counts this window. */
  attribute: string;
}

/**
 * The last window computed of each kind: every request asks for the same few windows several times (the write,
 * the headers, the shares' usage), and naming one formats a date. Windows are immutable values.
 */
const lastWindow: Partial<Record<WindowKind, Readonly<QuotaWindow>>> = {};

/** The window of `kind` that contains the instant `now` (epoch ms). */
export function windowAt(kind: WindowKind, now: number): QuotaWindow {
  const length = WINDOW_LENGTH_MS[kind];
  const start = Math.floor(now / length) * length;
  const last = lastWindow[kind];
  if (last?.start === start) return last;
  const window: QuotaWindow = Object.freeze({
    kind,
    start,
    end: start + length,
    attribute: `${PREFIX[kind]}#${new Date(start).toISOString().slice(0, NAME_LENGTH[kind])}`,
  });
  lastWindow[kind] = window;
  return window;
}

/** The minute, hour and day windows that contain `now`, shortest first. */
export function currentWindows(now: number): QuotaWindow[] {
  return WINDOW_KINDS.map((kind) => windowAt(kind, now));
}

/** Attribute names already parsed: a quota item holds the same few names request after request. */
const parsedAttributes = new Map<string, QuotaWindow | undefined>();
const MAX_PARSED_ATTRIBUTES = 256;

/** The window a quota item attribute counts, or undefined when the attribute is not a window counter. */
export function parseWindowAttribute(attribute: string): QuotaWindow | undefined {
  if (parsedAttributes.has(attribute)) return parsedAttributes.get(attribute);
  const window = parseAttribute(attribute);
  if (parsedAttributes.size >= MAX_PARSED_ATTRIBUTES) parsedAttributes.clear();
  parsedAttributes.set(attribute, window);
  return window;
}

function parseAttribute(attribute: string): QuotaWindow | undefined {
  const match = ATTRIBUTE.exec(attribute);
  if (!match) return undefined;
  const kind = KIND_OF_PREFIX[match[1] as string];
  const name = match[2] as string;
  if (!kind || name.length !== NAME_LENGTH[kind]) return undefined;
  const start = Date.parse(`${name}${NAME_SUFFIX[kind]}`);
  if (Number.isNaN(start)) return undefined;
  const window = windowAt(kind, start);
  // `2026-02-30` parses (to March 2nd); only a canonical name is a window.
  return window.attribute === attribute ? window : undefined;
}

/**
 * Whole seconds from `now` until `instant`, rounded up and at least 1: what `Retry-After` and
 * `RateLimit-Reset` say, so that a caller who waits that long finds the window over.
 */
export function secondsUntil(instant: number, now: number): number {
  return Math.max(1, Math.ceil((instant - now) / 1000));
}
