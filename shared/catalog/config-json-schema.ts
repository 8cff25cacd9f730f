/**
 * The JSON Schema of the configuration file, generated from the zod schema that validates it, so editors
 * can check and complete a configuration (config/demo.json points at docs/config.schema.json with "$schema").
 * Cross-reference rules (grants to known datasets, unique codes) stay in the loader: JSON Schema cannot say them.
 */
import * as z from 'zod';
import { catalogConfigSchema } from './schema';

export function buildConfigJsonSchema(): Record<string, unknown> {
  // `input`: what a file may contain (defaults and optional keys), not what the loader hands the code.
  const schema = z.toJSONSchema(catalogConfigSchema, { io: 'input', unrepresentable: 'any' });
  return {
    ...schema,
    title: 'Data access service configuration',
    description:
      'Applications, datasets, grants and registered queries (docs/interface.md §9). The loader also checks ' +
      'references between them: grants to known datasets, known fields, unique codes.',
  };
}
