/** A ready-to-paste, signed curl command: what the local server prints on start and `npm run sign` prints. */
import { signRequest } from '../signature.js';

export interface CurlRequest {
  baseUrl: string;
  path: string;
  appCode: string;
  datasetCode?: string | undefined;
  accessKey: string;
  secret: string;
  body: Record<string, unknown>;
  timeStamp?: number;
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The four signed headers of a request. */
export function signedHeaders(request: Omit<CurlRequest, 'baseUrl' | 'path' | 'body'>): Record<string, string> {
  const timeStamp = String(request.timeStamp ?? Date.now());
  const token = signRequest(
    { accessKey: request.accessKey, appCode: request.appCode, datasetCode: request.datasetCode, timeStamp },
    request.secret,
  );
  return {
    'X-Time-Stamp': timeStamp,
    'X-App-Code': request.appCode,
    ...(request.datasetCode ? { 'X-Dataset-Code': request.datasetCode } : {}),
    'X-Token': token,
  };
}

export function signedCurl(request: CurlRequest): string {
  const headers = { 'Content-Type': 'application/json', ...signedHeaders(request) };
  return [
    `curl -sS -X POST ${shellQuote(`${request.baseUrl}${request.path}`)}`,
    ...Object.entries(headers).map(([name, value]) => `  -H ${shellQuote(`${name}: ${value}`)}`),
    `  -d ${shellQuote(JSON.stringify(request.body))}`,
  ].join(' \\\n');
}
