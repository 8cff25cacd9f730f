/** The configuration local runs use when none is named: the demo in config/ (its own module, so tools can name it cheaply). */
import path from 'node:path';

export const DEFAULT_CONFIG = path.join(__dirname, '..', '..', 'config', 'demo.json');
