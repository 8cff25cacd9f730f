/**
 * Lambda's Invoke API for one function, as a process of its own: what stands in for the Lambda service when moto's
 * Step Functions interpreter runs a state machine on a machine without Docker (moto runs Lambda functions in
 * Docker). moto's interpreter sends every Invoke of a Task state to `localhost:$MOTO_PORT`, so moto's server is
 * started with MOTO_PORT naming this endpoint's port (.ci/integration-on-moto).
 *
 * Run as `node --import tsx lambda-invoke-endpoint.ts <module> <export>` with PORT and the function's environment:
 * it loads the handler once (one warm container), answers `POST /2015-03-31/functions/<name>/invocations` with
 * what the handler returns, and a handler's throw as Lambda reports it (`X-Amz-Function-Error: Unhandled` and a
 * body of `errorType`/`errorMessage`), which is what a state's Retry and Catch match. Invocations run at once, as
 * Lambda runs them in several containers (here they share one module instance); each is written to standard output
 * as one JSON line.
 */
import { createServer } from 'node:http';
import path from 'node:path';

type Handler = (event: unknown) => Promise<unknown>;

async function main(): Promise<void> {
  const [modulePath, exportName] = process.argv.slice(2);
  const port = Number(process.env.PORT);
  if (!modulePath || !exportName || !Number.isInteger(port)) {
    throw new Error('usage: PORT=<port> node --import tsx lambda-invoke-endpoint.ts <module> <export>');
  }
  const loaded = (await import(path.resolve(modulePath))) as Record<string, unknown>;
  const handler = (loaded[exportName] ?? (loaded.default as Record<string, unknown> | undefined)?.[exportName]) as
    | Handler
    | undefined;
  if (typeof handler !== 'function') throw new Error(`${modulePath} exports no function ${exportName}`);

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const invoke = /^\/2015-03-31\/functions\/[^/]+\/invocations/.test(request.url ?? '');
      if (request.method !== 'POST' || !invoke) {
        response.writeHead(404, {
          'content-type': 'application/json',
          'x-amzn-errortype': 'ResourceNotFoundException',
        });
        response.end(JSON.stringify({ message: `no such Lambda API here: ${request.method} ${request.url}` }));
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      void (async () => {
        const started = Date.now();
        let event: unknown;
        try {
          event = text === '' ? {} : JSON.parse(text);
          const result = await handler(event);
          console.log(JSON.stringify({ invocation: event, result, ms: Date.now() - started }));
          response.writeHead(200, { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST' });
          response.end(JSON.stringify(result ?? null));
        } catch (error) {
          const failure = {
            errorType: error instanceof Error ? error.name : 'Error',
            errorMessage: error instanceof Error ? error.message : String(error),
          };
          console.log(JSON.stringify({ invocation: event, failure, ms: Date.now() - started }));
          response.writeHead(200, {
            'content-type': 'application/json',
            'x-amz-executed-version': '$LATEST',
            'x-amz-function-error': 'Unhandled',
          });
          response.end(JSON.stringify(failure));
        }
      })();
    });
  });
  server.listen(port, '127.0.0.1', () => console.log(JSON.stringify({ listening: port })));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
