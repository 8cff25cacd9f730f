// @ts-check
/**
 * MySQL 8's functions, comparisons and aggregates as SQLite functions: what the SQLite rendering of a registered
 * query (sqlite-render.ts) calls where SQLite's own functions answer differently (text comparison under MySQL's
 * default collation, exact decimal division and rounding, dates as MySQL formats and counts them, JSON as MySQL
 * prints it). Plain CommonJS on purpose: the SQL worker thread starts from plain JavaScript files, and loads this
 * one beside it to register every function on each database it opens (`register`). Each function is pure: no
 * clock and no time zone of its own (the rendering passes the configuration's time zone as an argument).
 */

// ---------------------------------------------------------------------------------------------------------------
// Text under MySQL 8's default collation (utf8mb4_0900_ai_ci): letter case and accents are ignored, trailing
// spaces count (NO PAD), and punctuation sorts before digits, digits before letters.

/** ASCII punctuation and symbols in the collation's order; each is given a weight below the digits. */
const PUNCTUATION_ORDER = ' _-,;:!?.\'"()[]{}@*/\\&#%`^+<=>|~$';
/** @type {Map<string, string>} */
const PUNCTUATION_WEIGHT = new Map([...PUNCTUATION_ORDER].map((ch, i) => [ch, String.fromCharCode(1 + i)]));
/** @type {Map<string, string>} */
const foldCache = new Map();

/** One character without its case and accents (one character stays one, for LIKE and LOCATE). */
function foldChar(/** @type {string} */ ch) {
  let folded = foldCache.get(ch);
  if (folded === undefined) {
    const base = ch.normalize('NFD').replace(/\p{M}+/gu, '');
    const lower = (base === '' ? ch : base).toLowerCase();
    folded = [...lower].length === 1 ? lower : ch.toLowerCase();
    if ([...folded].length !== 1) folded = ch;
    foldCache.set(ch, folded);
  }
  return folded;
}

/**
 * The equality key of a text: equal keys exactly for texts the collation calls equal. For printable ASCII it is
 * the text in lower case, which SQLite's own lower() gives too (the rendering uses that where it can: it costs no
 * call into JavaScript).
 */
function equalityKey(/** @type {unknown} */ value) {
  if (value === null || value === undefined) return null;
  const text = typeof value === 'string' ? value : String(value);
  let key = '';
  for (const ch of text) {
    if (ch === 'ß' || ch === 'ẞ') key += 'ss';
    else key += ch < '\u0080' ? ch.toLowerCase() : foldChar(ch);
  }
  return key;
}

/**
 * The order key of a text: ordered as the collation orders texts, equal for equal texts. For ASCII letters and
 * digits alone it is the text in lower case, as SQLite's lower() gives it.
 */
function ciKey(/** @type {unknown} */ value) {
  if (value === null || value === undefined) return null;
  const text = typeof value === 'string' ? value : String(value);
  let key = '';
  for (const ch of text) {
    const weight = PUNCTUATION_WEIGHT.get(ch);
    if (weight !== undefined) key += weight;
    else if (ch === 'ß' || ch === 'ẞ') key += 'ss';
    else key += ch < '\u0080' ? ch.toLowerCase() : foldChar(ch);
  }
  return key;
}

/** @type {Map<string, RegExp>} */
const likeCache = new Map();

/** `text LIKE pattern [ESCAPE escape]` under the collation: 1, 0 or NULL. */
function like(
  /** @type {unknown} */ text,
  /** @type {unknown} */ pattern,
  /** @type {unknown} */ escapeChar,
  /** @type {unknown} */ binary,
) {
  if (text === null || pattern === null || escapeChar === null) return null;
  const esc = escapeChar === undefined ? '\\' : String(escapeChar);
  const source = String(pattern);
  const cacheKey = `${binary ? 'b' : 'c'}${esc}\u0000${source}`;
  let regex = likeCache.get(cacheKey);
  if (!regex) {
    let body = '';
    const chars = [...source];
    for (let i = 0; i < chars.length; i += 1) {
      const ch = /** @type {string} */ (chars[i]);
      if (ch === esc && i + 1 < chars.length) {
        i += 1;
        body += escapeRegex(binary ? /** @type {string} */ (chars[i]) : foldChar(/** @type {string} */ (chars[i])));
      } else if (ch === '%') body += '[\\s\\S]*';
      else if (ch === '_') body += '[\\s\\S]';
      else body += escapeRegex(binary ? ch : foldChar(ch));
    }
    regex = new RegExp(`^${body}$`, 'u');
    if (likeCache.size > 500) likeCache.clear();
    likeCache.set(cacheKey, regex);
  }
  const subject = binary ? String(text) : [...String(text)].map(foldChar).join('');
  return regex.test(subject) ? 1 : 0;
}

function escapeRegex(/** @type {string} */ text) {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/** @type {Map<string, RegExp>} */
const regexpCache = new Map();
const POSIX_CLASSES = /** @type {Record<string, string>} */ ({
  alpha: '\\p{L}',
  digit: '0-9',
  alnum: '\\p{L}0-9',
  space: '\\s',
  upper: '\\p{Lu}',
  lower: '\\p{Ll}',
  punct: '\\p{P}',
  xdigit: '0-9A-Fa-f',
  blank: ' \\t',
  cntrl: '\\p{Cc}',
});

/** `text REGEXP pattern` as MySQL 8 (ICU) runs it: case-insensitive unless the text compares in binary. */
function regexp(/** @type {unknown} */ text, /** @type {unknown} */ pattern, /** @type {unknown} */ binary) {
  if (text === null || pattern === null) return null;
  const source = String(pattern);
  const cacheKey = `${binary ? 'b' : 'c'}${source}`;
  let regex = regexpCache.get(cacheKey);
  if (!regex) {
    const translated = source.replace(/\[:([a-z]+):\]/g, (all, name) => POSIX_CLASSES[name] ?? all);
    try {
      regex = new RegExp(translated, binary ? 'u' : 'iu');
    } catch {
      throw new Error(`Illegal argument to a regular expression: '${source}'`);
    }
    if (regexpCache.size > 500) regexpCache.clear();
    regexpCache.set(cacheKey, regex);
  }
  return regex.test(String(text)) ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------------------------
// Numbers.

/** A text read as a number the way MySQL reads it: its longest numeric prefix, else 0. */
function toNumber(/** @type {unknown} */ value) {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return value;
  const match = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(String(value));
  return match ? Number(match[0]) : 0;
}

/**
 * A number as exact decimal digits: [sign, digits, scale] such that value = sign * digits / 10^scale. Doubles
 * are read from their shortest representation, which is the decimal they were computed to stand for.
 * @returns {[bigint, number]}
 */
function toDecimal(/** @type {number} */ value) {
  const text = Number.isInteger(value) && Math.abs(value) < 1e21 ? BigInt(value).toString() : String(value);
  const match = /^(-?)(\d*)\.?(\d*)(?:e([+-]?\d+))?$/.exec(text);
  if (!match) return [0n, 0];
  const [, sign, whole, fraction, exponent] = match;
  let digits = BigInt(`${whole || '0'}${fraction}`);
  let scale = (fraction ?? '').length - Number(exponent ?? 0);
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return [sign === '-' ? -digits : digits, scale];
}

/** `digits / 10^from` rescaled to `to` decimals, rounding half away from zero. */
function rescale(/** @type {bigint} */ digits, /** @type {number} */ from, /** @type {number} */ to) {
  if (to >= from) return digits * 10n ** BigInt(to - from);
  return divideRounded(digits, 10n ** BigInt(from - to));
}

/** Integer division rounding half away from zero. */
function divideRounded(/** @type {bigint} */ numerator, /** @type {bigint} */ denominator) {
  const negative = numerator < 0n !== denominator < 0n;
  const n = numerator < 0n ? -numerator : numerator;
  const d = denominator < 0n ? -denominator : denominator;
  let quotient = n / d;
  if ((n % d) * 2n >= d) quotient += 1n;
  return negative ? -quotient : quotient;
}

/** Exact digits with `scale` decimals as text: `12345, 2` is "123.45". */
function decimalText(/** @type {bigint} */ digits, /** @type {number} */ scale) {
  const negative = digits < 0n;
  let text = (negative ? -digits : digits).toString();
  if (scale > 0) {
    text = text.padStart(scale + 1, '0');
    text = `${text.slice(0, -scale)}.${text.slice(-scale)}`;
  }
  return negative && /[1-9]/.test(text) ? `-${text}` : text;
}

/** The decimal `value` rounded to `scale` decimals (half away from zero), as a number. */
function roundDecimal(/** @type {unknown} */ value, /** @type {number} */ scale) {
  if (value === null || value === undefined) return null;
  const number = toNumber(value);
  if (number === null || !Number.isFinite(number)) return number;
  const [digits, from] = toDecimal(number);
  if (scale >= 0) return Number(decimalText(rescale(digits, from, scale), scale));
  const unit = 10n ** BigInt(-scale);
  return Number(divideRounded(rescale(digits, from, 0), unit) * unit);
}

/** The decimal `value` cut to `scale` decimals (toward zero), as a number. */
function truncateDecimal(/** @type {unknown} */ value, /** @type {number} */ scale) {
  if (value === null || value === undefined) return null;
  const number = toNumber(value);
  if (number === null || !Number.isFinite(number)) return number;
  const [digits, from] = toDecimal(number);
  const cut = scale >= 0 ? Math.max(0, from - scale) : from - scale;
  let kept = cut > 0 ? digits / 10n ** BigInt(cut) : digits * 10n ** BigInt(-cut);
  if (scale < 0) {
    kept *= 10n ** BigInt(-scale);
    return Number(decimalText(kept, 0));
  }
  return Number(decimalText(kept, Math.min(from, scale)));
}

/** MySQL's ROUND and TRUNCATE of a DOUBLE: scale, round half to even (or cut), scale back. */
function roundDouble(/** @type {unknown} */ value, /** @type {number} */ places, /** @type {number} */ cut) {
  if (value === null || value === undefined || places === null) return null;
  const number = Number(value);
  const factor = 10 ** Math.abs(places);
  if (places >= 0 && !Number.isFinite(number * factor)) return number;
  const rint = (/** @type {number} */ x) => {
    if (cut) return x >= 0 ? Math.floor(x) : Math.ceil(x);
    const floor = Math.floor(x);
    const diff = x - floor;
    if (diff > 0.5) return floor + 1;
    if (diff < 0.5) return floor;
    return floor % 2 === 0 ? floor : floor + 1;
  };
  if (places < 0) return Number.isFinite(factor) ? rint(number / factor) * factor : 0;
  return rint(number * factor) / factor;
}

/** `left / right` of exact decimals (scales `leftScale`, `rightScale`) to `scale` decimals, half up; NULL on 0. */
function divide(
  /** @type {unknown} */ left,
  /** @type {unknown} */ right,
  /** @type {number} */ leftScale,
  /** @type {number} */ rightScale,
  /** @type {number} */ scale,
) {
  if (left === null || right === null || left === undefined || right === undefined) return null;
  const a = toNumber(left);
  const b = toNumber(right);
  if (a === null || b === null || b === 0) return null;
  const [aDigits, aScale] = toDecimal(a);
  const [bDigits, bScale] = toDecimal(b);
  const numerator =
    rescale(aDigits, aScale, Math.max(aScale, leftScale)) * 10n ** BigInt(scale + Math.max(bScale, rightScale));
  const denominator =
    rescale(bDigits, bScale, Math.max(bScale, rightScale)) * 10n ** BigInt(Math.max(aScale, leftScale));
  return Number(decimalText(divideRounded(numerator, denominator), scale));
}

/** `left DIV right`: the quotient cut toward zero; NULL on 0. */
function intDivide(/** @type {unknown} */ left, /** @type {unknown} */ right) {
  if (left === null || right === null) return null;
  const a = toNumber(left);
  const b = toNumber(right);
  if (a === null || b === null || b === 0) return null;
  return Math.trunc(a / b) + 0;
}

/** A DOUBLE as MySQL 8 writes it: the shortest digits, with an exponent outside 1e-5 .. 1e15. */
function doubleText(/** @type {unknown} */ value) {
  if (value === null || value === undefined) return null;
  const number = Number(value);
  if (number === 0) return '0';
  const exponent = Math.floor(Math.log10(Math.abs(number)));
  if (exponent < -5 || exponent >= 15) {
    const [mantissa, power] = number.toExponential().split('e');
    return `${mantissa}e${Number(power)}`;
  }
  return String(number).includes('e')
    ? number.toFixed(Math.max(0, -exponent + 16)).replace(/\.?0+$/, '')
    : String(number);
}

/** A DECIMAL of `scale` decimals as text, all its decimals written ("1.50"). */
function decimalToText(/** @type {unknown} */ value, /** @type {number} */ scale) {
  if (value === null || value === undefined) return null;
  const [digits, from] = toDecimal(Number(value));
  return decimalText(rescale(digits, from, scale), scale);
}

/** FORMAT(number, decimals): rounded half away from zero, thousands separated by commas. */
function format(/** @type {unknown} */ value, /** @type {unknown} */ places) {
  if (value === null || places === null) return null;
  const number = toNumber(value);
  if (number === null) return null;
  const scale = Math.min(30, Math.max(0, Math.round(Number(toNumber(places)))));
  const [digits, from] = toDecimal(number);
  const text = decimalText(rescale(digits, from, scale), scale);
  const [whole = '', fraction] = text.replace('-', '').split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${text.startsWith('-') ? '-' : ''}${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}

/**
 * CAST(x AS SIGNED | UNSIGNED): an exact number rounds half away from zero, a DOUBLE to the nearest even (C's
 * rint, as MySQL does); text is read for its leading integer.
 */
function castInteger(
  /** @type {unknown} */ value,
  /** @type {unknown} */ unsigned,
  /** @type {unknown} */ approximate,
) {
  if (value === null || value === undefined) return null;
  let result;
  if (typeof value === 'number' && approximate) result = Number(roundDouble(value, 0, 0)) + 0;
  else if (typeof value === 'number') result = Math.sign(value) * Math.round(Math.abs(value)) + 0;
  else {
    const match = /^\s*([+-]?\d+)/.exec(String(value));
    result = match ? Number(match[1]) : 0;
  }
  if (unsigned && result < 0) return Number(2n ** 64n + BigInt(result));
  return result;
}

/** CAST(x AS DECIMAL(precision, scale)): rounded to `scale`, held within the precision's largest value. */
function castDecimal(/** @type {unknown} */ value, /** @type {number} */ precision, /** @type {number} */ scale) {
  const rounded = roundDecimal(value, scale);
  if (rounded === null) return null;
  const largest = Number(decimalText(10n ** BigInt(precision) - 1n, scale));
  return Math.max(-largest, Math.min(largest, rounded));
}

// ---------------------------------------------------------------------------------------------------------------
// Text functions (positions and lengths count characters, LENGTH counts bytes).

const chars = (/** @type {unknown} */ value) => [...String(value)];
const anyNull = (/** @type {unknown[]} */ values) => values.some((value) => value === null || value === undefined);

function substring(/** @type {unknown} */ text, /** @type {unknown} */ position, /** @type {unknown} */ length) {
  if (anyNull([text, position]) || length === null) return null;
  const list = chars(text);
  let start = Math.round(Number(toNumber(position)));
  if (start === 0 || Math.abs(start) > list.length) return '';
  if (start < 0) start = list.length + start;
  else start -= 1;
  const count = length === undefined ? list.length : Math.round(Number(toNumber(length)));
  if (count <= 0) return '';
  return list.slice(start, start + count).join('');
}

function left(/** @type {unknown} */ text, /** @type {unknown} */ count) {
  if (anyNull([text, count])) return null;
  const n = Math.round(Number(toNumber(count)));
  return n <= 0 ? '' : chars(text).slice(0, n).join('');
}

function right(/** @type {unknown} */ text, /** @type {unknown} */ count) {
  if (anyNull([text, count])) return null;
  const n = Math.round(Number(toNumber(count)));
  return n <= 0 ? '' : chars(text).slice(-n).join('');
}

/** UPPER/LOWER: each character that has a one-character counterpart changes. */
function changeCase(/** @type {unknown} */ text, /** @type {unknown} */ upper) {
  if (text === null || text === undefined) return null;
  return chars(text)
    .map((ch) => {
      const changed = upper ? ch.toUpperCase() : ch.toLowerCase();
      return [...changed].length === 1 ? changed : ch;
    })
    .join('');
}

function trim(/** @type {unknown} */ text, /** @type {unknown} */ remove, /** @type {string} */ mode) {
  if (anyNull([text, remove])) return null;
  let result = String(text);
  const cut = String(remove);
  if (cut === '') return result;
  if (mode !== 'TRAILING') while (result.startsWith(cut)) result = result.slice(cut.length);
  if (mode !== 'LEADING') while (result.endsWith(cut)) result = result.slice(0, -cut.length);
  return result;
}

function pad(
  /** @type {unknown} */ text,
  /** @type {unknown} */ length,
  /** @type {unknown} */ filler,
  /** @type {unknown} */ atStart,
) {
  if (anyNull([text, length, filler])) return null;
  const n = Math.round(Number(toNumber(length)));
  if (n < 0) return null;
  const list = chars(text);
  if (list.length >= n) return list.slice(0, n).join('');
  const fill = chars(filler);
  if (fill.length === 0) return null;
  const padding = [];
  while (padding.length < n - list.length) padding.push(fill[padding.length % fill.length]);
  return atStart ? padding.join('') + list.join('') : list.join('') + padding.join('');
}

/** LOCATE(needle, haystack[, from]) under the collation (or in binary): 1-based, 0 when absent. */
function locate(
  /** @type {unknown} */ needle,
  /** @type {unknown} */ haystack,
  /** @type {unknown} */ from,
  /** @type {unknown} */ binary,
) {
  if (anyNull([needle, haystack]) || from === null) return null;
  const fold = (/** @type {string} */ ch) => (binary ? ch : foldChar(ch));
  const hay = chars(haystack).map(fold);
  const pin = chars(needle).map(fold);
  const start = from === undefined ? 1 : Math.round(Number(toNumber(from)));
  if (start < 1 || start > hay.length + 1) return 0;
  for (let i = start - 1; i + pin.length <= hay.length; i += 1) {
    if (pin.every((ch, j) => hay[i + j] === ch)) return i + 1;
  }
  return 0;
}

function repeat(/** @type {unknown} */ text, /** @type {unknown} */ count) {
  if (anyNull([text, count])) return null;
  const n = Math.round(Number(toNumber(count)));
  return n <= 0 ? '' : String(text).repeat(n);
}

function reverse(/** @type {unknown} */ text) {
  return text === null || text === undefined ? null : chars(text).reverse().join('');
}

// ---------------------------------------------------------------------------------------------------------------
// Dates and times: values are text, 'YYYY-MM-DD', 'YYYY-MM-DD HH:MM:SS' and 'HH:MM:SS'.

/**
 * @typedef {{ year: number, month: number, day: number, hour: number, minute: number, second: number, micro: number, hasTime: boolean }} Moment
 */

const pad2 = (/** @type {number} */ n) => String(n).padStart(2, '0');
const isLeap = (/** @type {number} */ y) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysInMonth = (/** @type {number} */ y, /** @type {number} */ m) =>
  [31, isLeap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1] ?? 0;

/** A date or datetime as MySQL reads one from text or a number; undefined when it is not a valid one. */
function readMoment(/** @type {unknown} */ value) {
  if (value === null || value === undefined) return undefined;
  const text = String(value).trim();
  let match = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6}))?)?)?$/.exec(text);
  if (!match) {
    const digits = /^(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2}))?$/.exec(text);
    if (!digits) return undefined;
    match = digits;
  }
  const [, y, mo, d, h, mi, s, f] = match;
  /** @type {Moment} */
  const moment = {
    year: Number(y),
    month: Number(mo),
    day: Number(d),
    hour: Number(h ?? 0),
    minute: Number(mi ?? 0),
    second: Number(s ?? 0),
    micro: Number((f ?? '').padEnd(6, '0')),
    hasTime: h !== undefined,
  };
  if (moment.month < 1 || moment.month > 12 || moment.day < 1 || moment.day > daysInMonth(moment.year, moment.month))
    return undefined;
  if (moment.hour > 23 || moment.minute > 59 || moment.second > 59) return undefined;
  return moment;
}

/** A time of day ('HH:MM:SS') from a time, a datetime or text. */
function readTime(/** @type {unknown} */ value) {
  if (value === null || value === undefined) return undefined;
  const moment = readMoment(value);
  if (moment) return moment;
  const match = /^\s*(-?\d{1,3}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6}))?)?\s*$/.exec(String(value));
  if (!match) return undefined;
  return {
    year: 0,
    month: 0,
    day: 0,
    hour: Number(match[1]),
    minute: Number(match[2]),
    second: Number(match[3] ?? 0),
    micro: Number((match[4] ?? '').padEnd(6, '0')),
    hasTime: true,
  };
}

const dateText = (/** @type {Moment} */ m) => `${String(m.year).padStart(4, '0')}-${pad2(m.month)}-${pad2(m.day)}`;
const timeText = (/** @type {Moment} */ m) => `${pad2(m.hour)}:${pad2(m.minute)}:${pad2(m.second)}`;
const datetimeText = (/** @type {Moment} */ m) => `${dateText(m)} ${timeText(m)}`;

/** MySQL's day number (days since year 0), which its week and weekday rules are written in. */
function dayNumber(/** @type {number} */ year, /** @type {number} */ month, /** @type {number} */ day) {
  if (year === 0 && month === 0) return 0;
  let y = year;
  let sum = 365 * y + 31 * (month - 1) + day;
  if (month <= 2) y -= 1;
  else sum -= Math.floor((month * 4 + 23) / 10);
  const centuries = Math.floor(((Math.floor(y / 100) + 1) * 3) / 4);
  return sum + Math.floor(y / 4) - centuries;
}

const weekdayOf = (/** @type {number} */ daynr, /** @type {boolean} */ sundayFirst) =>
  (daynr + 5 + (sundayFirst ? 1 : 0)) % 7;
const daysInYear = (/** @type {number} */ y) => (isLeap(y) ? 366 : 365);

/** MySQL's calc_week: the week number under a behaviour (1 Monday first, 2 week year, 4 first weekday rule). */
function calcWeek(/** @type {Moment} */ m, /** @type {number} */ behaviour) {
  const daynr = dayNumber(m.year, m.month, m.day);
  let firstDaynr = dayNumber(m.year, 1, 1);
  const mondayFirst = (behaviour & 1) !== 0;
  let weekYear = (behaviour & 2) !== 0;
  const firstWeekday = (behaviour & 4) !== 0;
  let weekday = weekdayOf(firstDaynr, !mondayFirst);
  let year = m.year;
  if (m.month === 1 && m.day <= 7 - weekday) {
    if (!weekYear && ((firstWeekday && weekday !== 0) || (!firstWeekday && weekday >= 4))) return { week: 0, year };
    weekYear = true;
    year -= 1;
    const days = daysInYear(year);
    firstDaynr -= days;
    weekday = (weekday + 53 * 7 - days) % 7;
  }
  let days;
  if ((firstWeekday && weekday !== 0) || (!firstWeekday && weekday >= 4)) days = daynr - (firstDaynr + (7 - weekday));
  else days = daynr - (firstDaynr - weekday);
  if (weekYear && days >= 52 * 7) {
    weekday = (weekday + daysInYear(year)) % 7;
    if ((!firstWeekday && weekday < 4) || (firstWeekday && weekday === 0)) return { week: 1, year: year + 1 };
  }
  return { week: Math.floor(days / 7) + 1, year };
}

/** WEEK(date, mode): the mode's bits as MySQL's week_mode reads them. */
function week(/** @type {unknown} */ value, /** @type {unknown} */ mode) {
  const m = readMoment(value);
  if (!m || mode === null) return null;
  let behaviour = Number(mode ?? 0) & 7;
  if (!(behaviour & 1)) behaviour ^= 4;
  return calcWeek(m, behaviour).week;
}

const DAY_NAMES = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

function ordinal(/** @type {number} */ day) {
  if (day >= 11 && day <= 13) return `${day}th`;
  return `${day}${['th', 'st', 'nd', 'rd'][day % 10] ?? 'th'}`;
}

/** DATE_FORMAT(value, format), every specifier of MySQL 8's manual. */
function dateFormat(/** @type {unknown} */ value, /** @type {unknown} */ pattern) {
  if (value === null || pattern === null || value === undefined) return null;
  const m = readMoment(value);
  if (!m) return null;
  const weekday = weekdayOf(dayNumber(m.year, m.month, m.day), false);
  const hour12 = m.hour % 12 === 0 ? 12 : m.hour % 12;
  let out = '';
  const text = String(pattern);
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (ch !== '%' || i + 1 >= text.length) {
      out += ch;
      continue;
    }
    i += 1;
    const spec = text[i];
    switch (spec) {
      case 'a':
        out += (DAY_NAMES[weekday] ?? '').slice(0, 3);
        break;
      case 'b':
        out += (MONTH_NAMES[m.month - 1] ?? '').slice(0, 3);
        break;
      case 'c':
        out += String(m.month);
        break;
      case 'D':
        out += ordinal(m.day);
        break;
      case 'd':
        out += pad2(m.day);
        break;
      case 'e':
        out += String(m.day);
        break;
      case 'f':
        out += String(m.micro).padStart(6, '0');
        break;
      case 'H':
        out += pad2(m.hour);
        break;
      case 'h':
      case 'I':
        out += pad2(hour12);
        break;
      case 'i':
        out += pad2(m.minute);
        break;
      case 'j':
        out += String(dayNumber(m.year, m.month, m.day) - dayNumber(m.year, 1, 1) + 1).padStart(3, '0');
        break;
      case 'k':
        out += String(m.hour);
        break;
      case 'l':
        out += String(hour12);
        break;
      case 'M':
        out += MONTH_NAMES[m.month - 1] ?? '';
        break;
      case 'm':
        out += pad2(m.month);
        break;
      case 'p':
        out += m.hour < 12 ? 'AM' : 'PM';
        break;
      case 'r':
        out += `${pad2(hour12)}:${pad2(m.minute)}:${pad2(m.second)} ${m.hour < 12 ? 'AM' : 'PM'}`;
        break;
      case 'S':
      case 's':
        out += pad2(m.second);
        break;
      case 'T':
        out += timeText(m);
        break;
      case 'U':
        out += pad2(calcWeek(m, 4).week);
        break;
      case 'u':
        out += pad2(calcWeek(m, 1).week);
        break;
      case 'V':
        out += pad2(calcWeek(m, 6).week);
        break;
      case 'v':
        out += pad2(calcWeek(m, 3).week);
        break;
      case 'W':
        out += DAY_NAMES[weekday] ?? '';
        break;
      case 'w':
        out += String((weekday + 1) % 7);
        break;
      case 'X':
        out += String(calcWeek(m, 6).year).padStart(4, '0');
        break;
      case 'x':
        out += String(calcWeek(m, 3).year).padStart(4, '0');
        break;
      case 'Y':
        out += String(m.year).padStart(4, '0');
        break;
      case 'y':
        out += pad2(m.year % 100);
        break;
      default:
        out += spec;
    }
  }
  return out;
}

/** STR_TO_DATE(text, format): the date, datetime or time the format reads, as `kind` says; NULL when it does not match. */
function strToDate(/** @type {unknown} */ value, /** @type {unknown} */ pattern, /** @type {string} */ kind) {
  if (value === null || pattern === null || value === undefined) return null;
  const text = String(value);
  const fmt = String(pattern);
  let pos = 0;
  const parts = {
    year: 0,
    month: 0,
    day: 0,
    hour: 0,
    minute: 0,
    second: 0,
    micro: 0,
    pm: /** @type {boolean | undefined} */ (undefined),
    yday: 0,
  };
  const number = (/** @type {number} */ max) => {
    const match = new RegExp(`^\\d{1,${max}}`).exec(text.slice(pos));
    if (!match) throw new Error('no match');
    pos += match[0].length;
    return { value: Number(match[0]), length: match[0].length };
  };
  const name = (/** @type {string[]} */ names, /** @type {boolean} */ short) => {
    const rest = text.slice(pos).toLowerCase();
    const index = names.findIndex((n) => rest.startsWith((short ? n.slice(0, 3) : n).toLowerCase()));
    if (index < 0) throw new Error('no match');
    pos += short ? 3 : (names[index] ?? '').length;
    return index;
  };
  try {
    for (let i = 0; i < fmt.length; i += 1) {
      const ch = fmt[i];
      if (ch === '%' && i + 1 < fmt.length) {
        i += 1;
        switch (fmt[i]) {
          case 'Y': {
            const n = number(4);
            parts.year = n.length <= 2 ? (n.value < 70 ? 2000 + n.value : 1900 + n.value) : n.value;
            break;
          }
          case 'y': {
            const n = number(2).value;
            parts.year = n < 70 ? 2000 + n : 1900 + n;
            break;
          }
          case 'm':
          case 'c':
            parts.month = number(2).value;
            break;
          case 'd':
          case 'e':
            parts.day = number(2).value;
            break;
          case 'D':
            parts.day = number(2).value;
            pos += /^(st|nd|rd|th)/i.test(text.slice(pos)) ? 2 : 0;
            break;
          case 'H':
          case 'k':
            parts.hour = number(2).value;
            break;
          case 'h':
          case 'I':
          case 'l':
            parts.hour = number(2).value;
            break;
          case 'i':
            parts.minute = number(2).value;
            break;
          case 's':
          case 'S':
            parts.second = number(2).value;
            break;
          case 'f': {
            const n = number(6);
            parts.micro = Number(String(n.value).padStart(n.length, '0').padEnd(6, '0'));
            break;
          }
          case 'j':
            parts.yday = number(3).value;
            break;
          case 'p': {
            const rest = text.slice(pos, pos + 2).toUpperCase();
            if (rest !== 'AM' && rest !== 'PM') throw new Error('no match');
            parts.pm = rest === 'PM';
            pos += 2;
            break;
          }
          case 'M':
            parts.month = name(MONTH_NAMES, false) + 1;
            break;
          case 'b':
            parts.month = name(MONTH_NAMES, true) + 1;
            break;
          case 'W':
            name(DAY_NAMES, false);
            break;
          case 'a':
            name(DAY_NAMES, true);
            break;
          case 'T':
          case 'r': {
            parts.hour = number(2).value;
            if (text[pos++] !== ':') throw new Error('no match');
            parts.minute = number(2).value;
            if (text[pos++] !== ':') throw new Error('no match');
            parts.second = number(2).value;
            if (fmt[i] === 'r') {
              while (text[pos] === ' ') pos += 1;
              const half = text.slice(pos, pos + 2).toUpperCase();
              if (half !== 'AM' && half !== 'PM') throw new Error('no match');
              parts.pm = half === 'PM';
              pos += 2;
            }
            break;
          }
          case '%':
            if (text[pos++] !== '%') throw new Error('no match');
            break;
          default:
            if (text[pos++] !== fmt[i]) throw new Error('no match');
        }
      } else if (ch === ' ') {
        while (text[pos] === ' ') pos += 1;
      } else {
        if (text[pos] !== ch) throw new Error('no match');
        pos += 1;
      }
    }
  } catch {
    return null;
  }
  if (parts.pm !== undefined) {
    if (parts.hour < 1 || parts.hour > 12) return null;
    parts.hour = (parts.hour % 12) + (parts.pm ? 12 : 0);
  }
  if (parts.yday > 0) {
    const start = Date.UTC(parts.year, 0, 1) + (parts.yday - 1) * 86_400_000;
    const date = new Date(start);
    parts.month = date.getUTCMonth() + 1;
    parts.day = date.getUTCDate();
  }
  const time = `${pad2(parts.hour)}:${pad2(parts.minute)}:${pad2(parts.second)}`;
  if (parts.hour > 23 || parts.minute > 59 || parts.second > 59) return null;
  if (kind === 'time') return time;
  if (parts.month < 1 || parts.month > 12 || parts.day < 1 || parts.day > daysInMonth(parts.year, parts.month))
    return null;
  const date = `${String(parts.year).padStart(4, '0')}-${pad2(parts.month)}-${pad2(parts.day)}`;
  return kind === 'date' ? date : `${date} ${time}`;
}

/** Seconds since 0000-01-01 00:00:00 of a moment (proleptic Gregorian, as MySQL counts). */
function secondsOf(/** @type {Moment} */ m) {
  return dayNumber(m.year, m.month, m.day) * 86_400 + m.hour * 3_600 + m.minute * 60 + m.second;
}

/** The moment `seconds` after 0000-01-01 00:00:00. */
function momentOfSeconds(/** @type {number} */ seconds) {
  const daynr = Math.floor(seconds / 86_400);
  const rest = seconds - daynr * 86_400;
  // 719528 is MySQL's day number of 1970-01-01.
  const date = new Date((daynr - 719_528) * 86_400_000);
  const year = date.getUTCFullYear();
  return {
    year,
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: Math.floor(rest / 3_600),
    minute: Math.floor((rest % 3_600) / 60),
    second: rest % 60,
    micro: 0,
    hasTime: true,
  };
}

const UNIT_SECONDS = /** @type {Record<string, number>} */ ({
  SECOND: 1,
  MINUTE: 60,
  HOUR: 3_600,
  DAY: 86_400,
  WEEK: 604_800,
});
const UNIT_MONTHS = /** @type {Record<string, number>} */ ({ MONTH: 1, QUARTER: 3, YEAR: 12 });

/**
 * DATE_ADD(value, INTERVAL amount unit) (and DATE_SUB, `+ INTERVAL`): a date stays a date for units of a day
 * or more, otherwise the answer is a datetime; a month past the end of a shorter month lands on its last day.
 */
function dateAdd(
  /** @type {unknown} */ value,
  /** @type {unknown} */ amount,
  /** @type {string} */ unit,
  /** @type {number} */ sign,
) {
  const m = readMoment(value);
  if (!m || amount === null || amount === undefined) return null;
  const raw = Number(toNumber(amount));
  const n = sign * Math.sign(raw) * Math.round(Math.abs(raw));
  let result;
  if (unit in UNIT_MONTHS) {
    const months = m.year * 12 + (m.month - 1) + n * (UNIT_MONTHS[unit] ?? 0);
    const year = Math.floor(months / 12);
    const month = (months % 12) + 1;
    result = { ...m, year, month, day: Math.min(m.day, daysInMonth(year, month)) };
  } else {
    result = { ...momentOfSeconds(secondsOf(m) + n * (UNIT_SECONDS[unit] ?? 0)), micro: m.micro };
  }
  if (result.year < 0 || result.year > 9999) return null;
  const keepsDate = !m.hasTime && (unit === 'DAY' || unit === 'WEEK' || unit in UNIT_MONTHS);
  return keepsDate ? dateText(result) : datetimeText(result);
}

function dateDiff(/** @type {unknown} */ a, /** @type {unknown} */ b) {
  const x = readMoment(a);
  const y = readMoment(b);
  if (!x || !y) return null;
  return dayNumber(x.year, x.month, x.day) - dayNumber(y.year, y.month, y.day);
}

/** TIMESTAMPDIFF(unit, from, to): whole units from `from` to `to`, cut toward zero. */
function timestampDiff(/** @type {string} */ unit, /** @type {unknown} */ a, /** @type {unknown} */ b) {
  const x = readMoment(a);
  const y = readMoment(b);
  if (!x || !y) return null;
  if (unit in UNIT_MONTHS) {
    let months = y.year * 12 + y.month - (x.year * 12 + x.month);
    const xRest = ((x.day * 24 + x.hour) * 60 + x.minute) * 60 + x.second;
    const yRest = ((y.day * 24 + y.hour) * 60 + y.minute) * 60 + y.second;
    if (months > 0 && yRest < xRest) months -= 1;
    else if (months < 0 && yRest > xRest) months += 1;
    return Math.trunc(months / (UNIT_MONTHS[unit] ?? 1)) + 0;
  }
  return Math.trunc((secondsOf(y) - secondsOf(x)) / (UNIT_SECONDS[unit] ?? 1)) + 0;
}

/** Offset (ms) of `timeZone` from UTC at the instant `epochMs`. */
function zoneOffset(/** @type {number} */ epochMs, /** @type {string} */ timeZone) {
  if (timeZone === 'UTC') return 0;
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(epochMs));
  const get = (/** @type {string} */ type) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return (
    Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) -
    Math.floor(epochMs / 1000) * 1000
  );
}

/** UNIX_TIMESTAMP(value): seconds since 1970 of a local datetime in `timeZone`; 0 outside MySQL's range. */
function unixTimestamp(/** @type {unknown} */ value, /** @type {string} */ timeZone) {
  const m = readMoment(value);
  if (!m) return null;
  const local = Date.UTC(m.year, m.month - 1, m.day, m.hour, m.minute, m.second);
  let epoch = local - zoneOffset(local, timeZone);
  epoch = local - zoneOffset(epoch, timeZone);
  const seconds = Math.floor(epoch / 1000);
  return seconds < 0 ? 0 : seconds;
}

/** FROM_UNIXTIME(seconds): the datetime in `timeZone`, with `fraction` decimals of a second when it has them. */
function fromUnixtime(/** @type {unknown} */ value, /** @type {string} */ timeZone, /** @type {number} */ fraction) {
  if (value === null || value === undefined) return null;
  const seconds = Number(toNumber(value));
  if (seconds < 0 || seconds > 32_536_771_199) return null;
  const whole = Math.floor(seconds);
  const local = new Date(whole * 1000 + zoneOffset(whole * 1000, timeZone));
  const text = `${local.toISOString().slice(0, 10)} ${local.toISOString().slice(11, 19)}`;
  if (!fraction) return text;
  const [, decimals = ''] = decimalToText(seconds, Math.min(6, fraction))?.split('.') ?? [];
  return `${text}.${decimals}`;
}

/** A date part: YEAR, QUARTER, MONTH, DAY, HOUR, MINUTE, SECOND, DAYOFWEEK, WEEKDAY. */
function datePart(/** @type {unknown} */ value, /** @type {string} */ part) {
  const m = ['HOUR', 'MINUTE', 'SECOND'].includes(part) ? readTime(value) : readMoment(value);
  if (!m) return null;
  switch (part) {
    case 'YEAR':
      return m.year;
    case 'QUARTER':
      return Math.ceil(m.month / 3);
    case 'MONTH':
      return m.month;
    case 'DAY':
      return m.day;
    case 'HOUR':
      return m.hour;
    case 'MINUTE':
      return m.minute;
    case 'SECOND':
      return m.second;
    case 'DAYOFWEEK':
      return weekdayOf(dayNumber(m.year, m.month, m.day), true) + 1;
    case 'WEEKDAY':
      return weekdayOf(dayNumber(m.year, m.month, m.day), false);
    default:
      return null;
  }
}

/** DATE(x), TIME(x), LAST_DAY(x), CAST(x AS DATE | DATETIME): the value as the kind asks, NULL when invalid. */
function temporal(/** @type {unknown} */ value, /** @type {string} */ kind) {
  if (kind === 'time') {
    const t = readTime(value);
    return t ? timeText(t) : null;
  }
  const m = readMoment(value);
  if (!m) return null;
  if (kind === 'date') return dateText(m);
  if (kind === 'last_day') return dateText({ ...m, day: daysInMonth(m.year, m.month) });
  return datetimeText(m);
}

// ---------------------------------------------------------------------------------------------------------------
// JSON. Inside a statement a JSON value is its text; results show it as MySQL prints JSON.

/**
 * A JSON value as MySQL prints it: `{"key": value, ...}` with keys by length then bytes, `[a, b]`.
 * @returns {string}
 */
function jsonText(/** @type {unknown} */ value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(jsonText).join(', ')}]`;
  if (typeof value === 'object') {
    const keys = Object.keys(/** @type {object} */ (value)).sort((a, b) => {
      const la = Buffer.byteLength(a);
      const lb = Buffer.byteLength(b);
      return la !== lb ? la - lb : Buffer.compare(Buffer.from(a), Buffer.from(b));
    });
    return `{${keys.map((/** @type {string} */ k) => `${JSON.stringify(k)}: ${jsonText(/** @type {Record<string, unknown>} */ (value)[k])}`).join(', ')}}`;
  }
  if (typeof value === 'number')
    return Number.isInteger(value) && Math.abs(value) < 1e15 ? String(value) : (doubleText(value) ?? 'null');
  return JSON.stringify(value);
}

/**
 * A JSON text read as a JSON function reads its argument: its value, or MySQL 8's error 3141 naming the function,
 * the argument, why and where (`jsonSyntaxError`).
 */
function parseJson(/** @type {unknown} */ text, fn = 'json_extract', argument = 1) {
  if (text === null || text === undefined) return undefined;
  const raw = String(text);
  let value;
  try {
    value = JSON.parse(raw);
  } catch {
    value = undefined;
  }
  // JSON.parse reads 1e400 as Infinity where MySQL refuses it: such a text goes through the check below.
  const problem = value === undefined || /\d[eE]/.test(raw) ? jsonSyntaxError(raw) : undefined;
  if (problem) {
    throw new Error(
      `MySQL error 3141: Invalid JSON text in argument ${argument} to function ${fn}: "${problem.reason}" at position ${problem.position}.`,
    );
  }
  return { value };
}

/**
 * Why a text is not JSON and where, as MySQL 8 reports it (its parser is RapidJSON's, read with its default flags):
 * RapidJSON's message for the first error and its offset in bytes of UTF-8. `undefined` when the text is JSON.
 * @returns {{ reason: string, position: number } | undefined}
 */
function jsonSyntaxError(/** @type {string} */ text) {
  const bytes = Buffer.from(text, 'utf8');
  let at = 0;
  const peek = () => bytes[at] ?? 0;
  const fail = (/** @type {string} */ reason, position = at) => {
    throw new JsonSyntax(reason, position);
  };
  const isDigit = (/** @type {number | undefined} */ c) => c !== undefined && c >= 0x30 && c <= 0x39;
  const skipSpace = () => {
    while (peek() === 0x20 || peek() === 0x0a || peek() === 0x0d || peek() === 0x09) at += 1;
  };
  const consume = (/** @type {string} */ ch) => {
    if (peek() !== ch.charCodeAt(0)) return false;
    at += 1;
    return true;
  };
  const literal = (/** @type {string} */ word) => {
    at += 1;
    for (const ch of word.slice(1)) if (!consume(ch)) fail('Invalid value.');
  };
  const hex4 = (/** @type {number} */ escapeAt) => {
    let code = 0;
    for (let i = 0; i < 4; i += 1) {
      const c = String.fromCharCode(peek());
      if (!/[0-9A-Fa-f]/.test(c)) fail('Incorrect hex digit after \\u escape in string.', escapeAt);
      code = code * 16 + Number.parseInt(c, 16);
      at += 1;
    }
    return code;
  };
  const string = () => {
    at += 1;
    for (;;) {
      const c = peek();
      if (c === 0x5c) {
        const escapeAt = at;
        at += 1;
        const e = String.fromCharCode(peek());
        if ('"\\/bfnrt'.includes(e)) at += 1;
        else if (e === 'u') {
          at += 1;
          const code = hex4(escapeAt);
          if (code >= 0xd800 && code <= 0xdbff) {
            if (!consume('\\') || !consume('u')) fail('The surrogate pair in string is invalid.', escapeAt);
            const low = hex4(escapeAt);
            if (low < 0xdc00 || low > 0xdfff) fail('The surrogate pair in string is invalid.', escapeAt);
          }
        } else fail('Invalid escape character in string.', escapeAt);
      } else if (c === 0x22) {
        at += 1;
        return;
      } else if (c === 0) fail('Missing a closing quotation mark in string.');
      else if (c < 0x20) fail('Invalid encoding in string.');
      else at += 1;
    }
  };
  const number = () => {
    const start = at;
    consume('-');
    if (!consume('0')) {
      if (!isDigit(bytes[at])) fail('Invalid value.');
      while (isDigit(bytes[at])) at += 1;
    }
    if (consume('.')) {
      if (!isDigit(bytes[at])) fail('Miss fraction part in number.');
      while (isDigit(bytes[at])) at += 1;
    }
    if (consume('e') || consume('E')) {
      if (!consume('+')) consume('-');
      if (!isDigit(bytes[at])) fail('Miss exponent in number.');
      while (isDigit(bytes[at])) at += 1;
    }
    if (!Number.isFinite(Number(bytes.subarray(start, at).toString()))) {
      fail('Number too big to be stored in double.', start);
    }
  };
  /** @returns {void} */
  const value = () => {
    switch (String.fromCharCode(peek())) {
      case 'n':
        return literal('null');
      case 't':
        return literal('true');
      case 'f':
        return literal('false');
      case '"':
        return string();
      case '{': {
        at += 1;
        skipSpace();
        if (consume('}')) return;
        for (;;) {
          if (peek() !== 0x22) fail('Missing a name for object member.');
          string();
          skipSpace();
          if (!consume(':')) fail('Missing a colon after a name of object member.');
          skipSpace();
          value();
          skipSpace();
          if (consume(',')) skipSpace();
          else if (consume('}')) return;
          else fail("Missing a comma or '}' after an object member.");
        }
      }
      case '[': {
        at += 1;
        skipSpace();
        if (consume(']')) return;
        for (;;) {
          value();
          skipSpace();
          if (consume(',')) skipSpace();
          else if (consume(']')) return;
          else fail("Missing a comma or ']' after an array element.");
        }
      }
      default:
        return number();
    }
  };
  try {
    skipSpace();
    if (at >= bytes.length) fail('The document is empty.');
    value();
    skipSpace();
    if (at < bytes.length) fail('The document root must not be followed by other values.');
    return undefined;
  } catch (error) {
    if (error instanceof JsonSyntax) return { reason: error.reason, position: error.position };
    throw error;
  }
}

class JsonSyntax extends Error {
  constructor(/** @type {string} */ reason, /** @type {number} */ position) {
    super(reason);
    this.reason = reason;
    this.position = position;
  }
}

/**
 * A JSON path of MySQL's syntax: `$`, `.key`, `."quoted key"`, `[n]`, `[last]`, `.*`, `[*]`. Throws on anything
 * else (`**`, ranges).
 * @returns {(string | number | '*' | '[*]' | 'last')[]}
 */
function readJsonPath(/** @type {string} */ path) {
  const steps = [];
  const text = path.trim();
  if (!text.startsWith('$')) throw new Error(`Invalid JSON path expression. The error is around character position 1.`);
  /** @type {[RegExp, (match: RegExpExecArray) => unknown][]} */
  const forms = [
    [/^\s*\.\s*\*/, () => '*'],
    [/^\s*\.\s*([A-Za-z_$][A-Za-z0-9_$]*)/, (m) => m[1] ?? ''],
    [/^\s*\.\s*"((?:[^"\\]|\\.)*)"/, (m) => JSON.parse(`"${m[1]}"`)],
    [/^\s*\[\s*\*\s*\]/, () => '[*]'],
    [/^\s*\[\s*(\d+)\s*\]/, (m) => Number(m[1])],
    [/^\s*\[\s*last\s*\]/, () => 'last'],
  ];
  let i = 1;
  while (i < text.length) {
    const rest = text.slice(i);
    if (/^\s+$/.test(rest)) break;
    let read = false;
    for (const [form, step] of forms) {
      const match = form.exec(rest);
      if (!match) continue;
      steps.push(step(match));
      i += match[0].length;
      read = true;
      break;
    }
    if (!read) throw new Error(`Invalid JSON path expression. The error is around character position ${i + 1}.`);
  }
  return /** @type {(string | number | '*' | '[*]' | 'last')[]} */ (steps);
}

/** @type {Map<string, ReturnType<typeof readJsonPath>>} */
const pathCache = new Map();

/** The values a path selects in a document (several only with wildcards). */
function selectPath(/** @type {unknown} */ doc, /** @type {ReturnType<typeof readJsonPath>} */ steps) {
  let current = [doc];
  for (const step of steps) {
    /** @type {unknown[]} */
    const next = [];
    for (const value of current) {
      if (step === '*') {
        if (value && typeof value === 'object' && !Array.isArray(value)) next.push(...Object.values(value));
      } else if (step === '[*]') {
        if (Array.isArray(value)) next.push(...value);
      } else if (typeof step === 'number' || step === 'last') {
        const list = Array.isArray(value) ? value : [value];
        const index = step === 'last' ? list.length - 1 : step;
        if (index >= 0 && index < list.length) next.push(list[index]);
      } else if (value && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, step)) {
        next.push(/** @type {Record<string, unknown>} */ (value)[step]);
      }
    }
    current = next;
  }
  return current;
}

/** JSON_EXTRACT(doc, path, ...): JSON text, NULL when nothing is found (an array when wildcards or several paths). */
function jsonExtract(/** @type {unknown} */ doc, /** @type {unknown[]} */ ...paths) {
  if (doc === null || paths.some((p) => p === null)) return null;
  const parsed = parseJson(doc);
  if (!parsed) return null;
  /** @type {unknown[]} */
  const found = [];
  let wildcard = paths.length > 1;
  for (const path of paths) {
    let steps = pathCache.get(String(path));
    if (!steps) {
      try {
        steps = readJsonPath(String(path));
      } catch (error) {
        // A path written in the query is checked at load; one bound as a parameter fails here, as in MySQL 8.
        throw new Error(`MySQL error 3143: ${/** @type {Error} */ (error).message}`);
      }
      if (pathCache.size > 500) pathCache.clear();
      pathCache.set(String(path), steps);
    }
    if (steps.some((s) => s === '*' || s === '[*]')) wildcard = true;
    found.push(...selectPath(parsed.value, steps));
  }
  if (found.length === 0) return null;
  return JSON.stringify(wildcard ? found : found[0]);
}

/** JSON_UNQUOTE(json text): a JSON string's content; any other value's text as MySQL prints it. */
function jsonUnquote(/** @type {unknown} */ text) {
  if (text === null || text === undefined) return null;
  const raw = String(text);
  if (raw.startsWith('"')) {
    try {
      return String(JSON.parse(raw));
    } catch {
      return raw;
    }
  }
  try {
    return jsonText(JSON.parse(raw));
  } catch {
    return raw;
  }
}

/**
 * JSON_UNQUOTE(text) of a text that is not a JSON value: MySQL 8 reads it as a JSON string only when it starts and
 * ends with a double quote (and fails with 3141 when that is not a JSON string); any other text is answered as is.
 */
function jsonUnquoteText(/** @type {unknown} */ text) {
  if (text === null || text === undefined) return null;
  const raw = String(text);
  if (raw.length < 2 || !raw.startsWith('"') || !raw.endsWith('"')) return raw;
  const parsed = parseJson(raw, 'json_unquote');
  return typeof parsed?.value === 'string' ? parsed.value : raw;
}

/**
 * A JSON function's document argument that is neither text nor JSON (a number, a date): MySQL 8 fails with 3146
 * for a value; NULL stays NULL.
 */
function jsonDocumentType(/** @type {unknown} */ value, /** @type {string} */ fn) {
  if (value === null || value === undefined) return null;
  throw new Error(
    `MySQL error 3146: Invalid data type for JSON data in argument 1 to function ${fn}; a JSON string or JSON type is required.`,
  );
}

/** JSON text as MySQL prints it (results and text conversions). */
function jsonFormat(/** @type {unknown} */ text) {
  if (text === null || text === undefined) return null;
  const parsed = parseJson(text);
  return parsed ? jsonText(parsed.value) : null;
}

/** A SQL value of the given kind as JSON text ('text', 'number', 'json'; a date is its text in quotes). */
function toJson(/** @type {unknown} */ value, /** @type {string} */ kind) {
  if (value === null || value === undefined) return 'null';
  if (kind === 'json') return String(value);
  if (kind === 'number') return JSON.stringify(Number(value));
  return JSON.stringify(String(value));
}

/** Compares a JSON value with a SQL value as MySQL compares JSON: -1, 0, 1, or NULL when they cannot compare. */
function jsonCompare(/** @type {unknown} */ json, /** @type {unknown} */ other, /** @type {string} */ kind) {
  if (json === null || other === null || json === undefined || other === undefined) return null;
  const parsed = parseJson(json);
  if (!parsed) return null;
  const left = parsed.value;
  const right = kind === 'json' ? JSON.parse(String(other)) : kind === 'number' ? Number(other) : String(other);
  const rank = (/** @type {unknown} */ v) =>
    v === null
      ? 0
      : typeof v === 'number'
        ? 1
        : typeof v === 'string'
          ? 2
          : typeof v === 'boolean'
            ? 5
            : Array.isArray(v)
              ? 4
              : 3;
  if (rank(left) !== rank(right)) return kind === 'json' ? Math.sign(rank(left) - rank(right)) : null;
  if (typeof left === 'number' || typeof left === 'string')
    return left < /** @type {any} */ (right) ? -1 : left > /** @type {any} */ (right) ? 1 : 0;
  if (typeof left === 'boolean') return Number(left) - Number(right);
  return jsonText(left) === jsonText(right) ? 0 : null;
}

// ---------------------------------------------------------------------------------------------------------------
// Aggregates.

/** The default `group_concat_max_len` of MySQL 8: a longer result is cut to this many bytes. */
const GROUP_CONCAT_MAX_BYTES = 1024;

const groupConcat = {
  init: () => ({ parts: /** @type {string[]} */ ([]), seen: /** @type {Set<unknown>} */ (new Set()), separator: ',' }),
  step: (
    /** @type {any} */ state,
    /** @type {unknown} */ value,
    /** @type {unknown} */ separator,
    /** @type {unknown} */ distinctKey,
  ) => {
    if (value === null || value === undefined) return state;
    state.separator = separator === null || separator === undefined ? '' : String(separator);
    if (distinctKey !== undefined && distinctKey !== null) {
      if (state.seen.has(distinctKey)) return state;
      state.seen.add(distinctKey);
    }
    state.parts.push(String(value));
    return state;
  },
  finalize: (/** @type {any} */ state) => {
    if (!state || state.parts.length === 0) return null;
    const joined = state.parts.join(state.separator);
    const bytes = Buffer.from(joined);
    if (bytes.length <= GROUP_CONCAT_MAX_BYTES) return joined;
    return bytes
      .subarray(0, GROUP_CONCAT_MAX_BYTES)
      .toString('utf8')
      .replace(/\uFFFD$/, '');
  },
};

const jsonArrayAgg = {
  init: () => /** @type {unknown[]} */ ([]),
  step: (/** @type {unknown[]} */ state, /** @type {unknown} */ json) => {
    state.push(JSON.parse(String(json)));
    return state;
  },
  finalize: (/** @type {unknown[]} */ state) => (state && state.length > 0 ? JSON.stringify(state) : null),
};

const jsonObjectAgg = {
  init: () => /** @type {Record<string, unknown>} */ ({}),
  step: (/** @type {Record<string, unknown>} */ state, /** @type {unknown} */ key, /** @type {unknown} */ json) => {
    if (key === null || key === undefined)
      throw new Error('MySQL error 3158: JSON documents may not contain NULL member names.');
    state[String(key)] = JSON.parse(String(json));
    return state;
  },
  finalize: (/** @type {Record<string, unknown> | undefined} */ state) =>
    state && Object.keys(state).length > 0 ? JSON.stringify(state) : null,
};

/** MIN/MAX of text under the collation: the first value with the least (greatest) key. */
function extreme(/** @type {number} */ direction) {
  return {
    init: () => ({ value: /** @type {unknown} */ (null), key: /** @type {string | null} */ (null) }),
    step: (/** @type {any} */ state, /** @type {unknown} */ value) => {
      if (value === null || value === undefined) return state;
      const key = ciKey(value);
      if (state.key === null || (key !== null && (key < state.key ? -1 : key > state.key ? 1 : 0) === direction)) {
        state.value = value;
        state.key = key;
      }
      return state;
    },
    finalize: (/** @type {any} */ state) => (state ? state.value : null),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Recursive WITH queries.

/**
 * A recursive WITH query's row of round `depth` (the seed's rows are round 0): MySQL 8 stops the statement when
 * a round past cte_max_recursion_depth would run, that is when round `limit` makes a row, with its error 3636.
 */
function cteDepth(/** @type {number} */ depth, /** @type {number} */ limit) {
  if (depth >= limit) {
    throw new Error(
      `MySQL error 3636: Recursive query aborted after ${limit + 1} iterations. Try increasing @@cte_max_recursion_depth to a larger value.`,
    );
  }
  return depth;
}

// ---------------------------------------------------------------------------------------------------------------
// Subqueries.

/** Called when a scalar subquery finds a second row: MySQL 8 fails the statement with error 1242. */
function subqueryRows() {
  throw new Error('MySQL error 1242: Subquery returns more than 1 row');
}

// ---------------------------------------------------------------------------------------------------------------

/** Scalar functions by the name the rendering calls them. */
const SCALARS = /** @type {Record<string, (...args: any[]) => unknown>} */ ({
  my_ci: equalityKey,
  my_ci_order: ciKey,
  my_like: like,
  my_regexp: regexp,
  my_num: toNumber,
  my_div: divide,
  my_intdiv: intDivide,
  my_round_dec: roundDecimal,
  my_truncate_dec: truncateDecimal,
  my_round_dbl: roundDouble,
  my_dbl_text: doubleText,
  my_dec_text: decimalToText,
  my_format: format,
  my_cast_int: castInteger,
  my_cast_dec: castDecimal,
  my_substring: substring,
  my_left: left,
  my_right: right,
  my_case: changeCase,
  my_trim: trim,
  my_pad: pad,
  my_locate: locate,
  my_repeat: repeat,
  my_reverse: reverse,
  my_week: week,
  my_date_format: dateFormat,
  my_str_to_date: strToDate,
  my_date_add: dateAdd,
  my_datediff: dateDiff,
  my_timestampdiff: timestampDiff,
  my_unix_timestamp: unixTimestamp,
  my_from_unixtime: fromUnixtime,
  my_date_part: datePart,
  my_temporal: temporal,
  my_json_extract: jsonExtract,
  my_json_unquote: jsonUnquote,
  my_json_unquote_text: jsonUnquoteText,
  my_json_document_type: jsonDocumentType,
  my_subquery_rows: subqueryRows,
  my_json_format: jsonFormat,
  my_to_json: toJson,
  my_json_compare: jsonCompare,
  my_cte_depth: cteDepth,
});

const AGGREGATE_FUNCTIONS =
  /** @type {Record<string, { init: () => unknown, step: (...args: any[]) => unknown, finalize: (state: any) => unknown }>} */ ({
    my_group_concat: groupConcat,
    my_json_arrayagg: jsonArrayAgg,
    my_json_objectagg: jsonObjectAgg,
    my_min_ci: extreme(-1),
    my_max_ci: extreme(1),
  });

/**
 * Registers every function on a sql.js database. sql.js passes each argument as a JS value and turns an
 * exception into the statement's error, with its message. It declares a function's number of arguments from
 * its `length`: -1 makes each one take any number (optional arguments arrive as `undefined`).
 * @param {{ create_function: Function, create_aggregate: Function }} db
 */
function register(db) {
  const anyArity = (/** @type {Function} */ fn) => {
    const wrapped = (/** @type {unknown[]} */ ...args) => fn(...args);
    Object.defineProperty(wrapped, 'length', { value: -1 });
    return wrapped;
  };
  for (const [name, fn] of Object.entries(SCALARS)) db.create_function(name, anyArity(fn));
  for (const [name, aggregate] of Object.entries(AGGREGATE_FUNCTIONS)) {
    // The step's `length` less one (its state) is the aggregate's number of arguments.
    const step = (/** @type {unknown[]} */ ...args) => aggregate.step(...args);
    Object.defineProperty(step, 'length', { value: 0 });
    db.create_aggregate(name, { ...aggregate, step });
  }
}

module.exports = { register, SCALARS, readJsonPath, jsonSyntaxError, ciKey, equalityKey };
