/**
 * Imported first by the entry of each operation a hook can run in (functions/get-one.ts and the others), so that
 * a bundle with the sandbox shipped beside it starts the sandbox's worker before the rest of the bundle loads:
 * the worker's boot and the engine's load then overlap the function's own init and its first request
 * (docs/hooks.md, "Cold start"). A bundle without the sandbox beside it looks for one file and goes on; from
 * source nothing starts before a hook runs.
 */
import { prewarmSandboxIfShipped } from './sandbox';

prewarmSandboxIfShipped();
