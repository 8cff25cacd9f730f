/**
 * `npm run bench -- <name>`: runs one benchmark (all of them without a name). A benchmark is a module whose
 * default export is an async function; add a line to BENCHMARKS to join.
 */
const BENCHMARKS: Record<string, () => Promise<{ default: () => Promise<void> }>> = {
  list: () => import('./list'),
};

async function main(): Promise<void> {
  const requested = process.argv.slice(2);
  const names = requested.length > 0 ? requested : Object.keys(BENCHMARKS);
  for (const name of names) {
    const load = BENCHMARKS[name];
    if (!load) {
      console.error(`unknown benchmark '${name}'; known: ${Object.keys(BENCHMARKS).join(', ')}`);
      process.exitCode = 1;
      return;
    }
    await (await load()).default();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
