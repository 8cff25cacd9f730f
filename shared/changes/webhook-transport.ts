/**
 * One HTTP POST of a webhook delivery (docs/interface.md §18), with the limits that keep a receiver from costing the
 * service anything: an answer within 15 seconds or the attempt fails; redirects are not followed (a 3xx is a
 * failure like any non-2xx); at most 64 KB of the receiver's answer is read, the rest is discarded; and, in a
 * deployment, the receiver's name is resolved once, every address it resolves to is checked (webhook-targets.ts),
 * and the connection goes to the address that was checked.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isNonPublicAddress } from './webhook-targets';

/** A receiver must answer within this long. */
export const DELIVERY_TIMEOUT_MS = 15_000;
/** At most this much of a receiver's answer is read. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export interface DeliveryAttempt {
  /** The receiver's HTTP status; absent when it could not be reached or did not answer in time. */
  status?: number;
  /** A `Retry-After` it sent, in ms. */
  retryAfterMs?: number;
  /** Why the attempt failed without a status, in words for status and the log (no secrets, no bodies). */
  error?: string;
  /** How much of its answer was read (at most `MAX_ANSWER_BYTES`). */
  answerBytes: number;
  durationMs: number;
}

/** Sends one webhook request; the port deliveries use (a test may give its own). */
export interface WebhookTransport {
  post(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<DeliveryAttempt>;
}

export interface HttpTransportOptions {
  /** Whether a private, loopback or link-local receiver may be reached (local runs only). */
  allowNonPublic: boolean;
  timeoutMs?: number;
  /** Name resolution (a test may give its own). */
  lookup?: typeof dnsLookup;
}

/** `Retry-After` in seconds or as an HTTP date, in ms; `undefined` when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The transport over node:http(s). */
export function httpWebhookTransport(options: HttpTransportOptions): WebhookTransport {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const resolve = options.lookup ?? dnsLookup;
  /** Resolve once; refuse when any address is not public (unless allowed); connect to the first one checked. */
  const checkedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname, { all: true, family: lookupOptions.family ?? 0 }, (error, addresses) => {
      if (error) {
        callback(error, '', 0);
        return;
      }
      const list = addresses as LookupAddress[];
      const refused = options.allowNonPublic ? undefined : list.find((a) => isNonPublicAddress(a.address));
      const chosen = list[0];
      if (refused || !chosen) {
        const why = refused
          ? `refused: ${hostname} resolves to a non-public address (${refused.address})`
          : `${hostname} resolves to no address`;
        callback(Object.assign(new Error(why), { code: 'EREFUSED_TARGET' }), '', 0);
        return;
      }
      if (lookupOptions.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [chosen]);
      else callback(null, chosen.address, chosen.family);
    });
  };

  return {
    post(url, headers, body) {
      const started = performance.now();
      return new Promise<DeliveryAttempt>((done) => {
        let settled = false;
        let timer: NodeJS.Timeout | undefined;
        const finish = (attempt: Omit<DeliveryAttempt, 'durationMs'>) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          done({ ...attempt, durationMs: performance.now() - started });
        };
        let target: URL;
        try {
          target = new URL(url);
        } catch {
          finish({ error: 'the subscription URL is not a URL', answerBytes: 0 });
          return;
        }
        // An address in the URL itself is never looked up: it is checked here.
        const literal = target.hostname.replace(/^\[|\]$/g, '');
        if (!options.allowNonPublic && isIP(literal) !== 0 && isNonPublicAddress(literal)) {
          finish({ error: `refused: ${literal} is a non-public address`, answerBytes: 0 });
          return;
        }
        const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
        const request = send(
          target,
          {
            method: 'POST',
            headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
            lookup: checkedLookup,
            // One connection per attempt: nothing of one receiver lingers for the next.
            agent: false,
          },
          (response: IncomingMessage) => {
            let read = 0;
            response.on('data', (chunk: Buffer) => {
              read += chunk.length;
              if (read >= MAX_ANSWER_BYTES) {
                read = MAX_ANSWER_BYTES;
                response.destroy();
                report();
              }
            });
            const report = () =>
              finish({
                status: response.statusCode ?? 0,
                answerBytes: Math.min(read, MAX_ANSWER_BYTES),
                ...optionalRetryAfter(retryAfterMs(response.headers['retry-after'], Date.now())),
              });
            response.on('end', report);
            response.on('close', report);
            response.on('error', report);
          },
        );
        timer = setTimeout(() => {
          request.destroy();
          finish({ error: `no answer within ${timeoutMs / 1000} s`, answerBytes: 0 });
        }, timeoutMs);
        request.on('error', (error: NodeJS.ErrnoException) => {
          finish({ error: describeNetworkError(error), answerBytes: 0 });
        });
        request.end(body);
      });
    },
  };
}

function optionalRetryAfter(ms: number | undefined): { retryAfterMs?: number } {
  return ms === undefined ? {} : { retryAfterMs: ms };
}

/** A network failure in words, for status and the log. */
function describeNetworkError(error: NodeJS.ErrnoException): string {
  if (error.code === 'EREFUSED_TARGET') return error.message;
  if (error.code === 'ECONNREFUSED') return 'connection refused';
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return 'the receiver name does not resolve';
  if (error.code === 'ECONNRESET') return 'connection reset';
  return error.code ? `network error (${error.code})` : 'network error';
}
