/**
 * zod's English messages ("Invalid input: expected string, received number"), which a configuration's problems
 * quote. The classic form installs them when its first schema is made; the tree-shakable form used by the
 * modules that functions bundle (`zod/mini`) leaves every message at "Invalid input" unless this runs first.
 */
import { config } from 'zod/mini';
import { en } from 'zod/v4/locales';

config(en());
