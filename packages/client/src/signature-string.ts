/**
 * The string version 1 signs (docs/interface.md §3): sorted `name=value` pairs joined by `&`. Pure, so that modules
 * that must run in a browser (`signature-v2.ts`) can build it without node:crypto.
 */
export interface SignatureInput {
  accessKey: string;
  appCode: string;
  /** Only when the request names a dataset. */
  datasetCode?: string | undefined;
  /** Milliseconds since the epoch, exactly as sent in X-Time-Stamp. */
  timeStamp: string | number;
}

/** Version 1's `name=value` pairs, unsorted. */
export function signaturePairs(input: SignatureInput): [string, string][] {
  const pairs: [string, string][] = [
    ['accessKey', input.accessKey],
    ['appCode', input.appCode],
    ['timeStamp', String(input.timeStamp)],
  ];
  if (input.datasetCode !== undefined && input.datasetCode !== '') pairs.push(['datasetCode', input.datasetCode]);
  return pairs;
}

/** Pairs sorted by name and joined as `name=value` with `&`. */
export function joinSorted(pairs: [string, string][]): string {
  return [...pairs]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

/** The sorted `name=value` pairs joined by `&` that the HMAC covers. */
export function buildStringToSign(input: SignatureInput): string {
  return joinSorted(signaturePairs(input));
}
