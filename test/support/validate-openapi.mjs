/**
 * Validates the OpenAPI document read from standard input with @seriousme/openapi-schema-validator and prints
 * its verdict as JSON. A separate process because the validator is an ES module that reads its schemas through
 * import.meta, which Jest's CommonJS module system cannot load.
 */
import { Validator } from '@seriousme/openapi-schema-validator';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const validator = new Validator();
const result = await validator.validate(JSON.parse(Buffer.concat(chunks).toString('utf8')));
process.stdout.write(JSON.stringify({ ...result, version: validator.version }));
