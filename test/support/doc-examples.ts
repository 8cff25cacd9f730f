/**
 * The fenced code blocks of the README and docs/*.md, and the rule that says which shell examples the tests run
 * (README, "Examples in the docs"): a fence's info string is its kind.
 *
 * - `sh`: runs as printed against `npm start -- --port <any>` (test/walkthrough/docs-examples.test.ts runs it).
 * - `sh aws`: needs an AWS account or a deployed stage, so it cannot run here; it must call `aws` or `cdk`.
 * - `sh setup`: installs, starts the service or runs the tests (`npm ci`, `npm start`, `npm test`, `das serve`):
 *   what the test itself does around the other examples; it must do one of those.
 * - Anything else names a language that is not a shell (`ts`, `js`, `json`, `http`, `text` for output). A fence
 *   with no info string, or a shell under another name (`bash`, `shell`, `console`, ...), is refused, so a new
 *   shell example cannot slip past the test.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export type ExampleKind = 'sh' | 'sh aws' | 'sh setup';

export interface CodeBlock {
  /** Relative to the repository, e.g. `docs/calling.md`. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  info: string;
  /** The block's lines, without the fence's indentation. */
  text: string;
}

/** README.md and every docs/*.md, relative to the repository. */
export function documentationFiles(repository: string): string[] {
  const docs = readdirSync(path.join(repository, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** Every fenced block of one Markdown file, in order; fences inside list items may be indented. */
export function codeBlocks(repository: string, file: string): CodeBlock[] {
  const lines = readFileSync(path.join(repository, file), 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```(.*)$/.exec(lines[i] as string);
    if (!open) continue;
    const indent = (open[1] as string).length;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !/^ *```\s*$/.test(lines[j] as string)) {
      body.push((lines[j] as string).slice(Math.min(indent, /^ */.exec(lines[j] as string)?.[0].length ?? 0)));
      j++;
    }
    if (j === lines.length) throw new Error(`${file}:${i + 1}: this fence is never closed`);
    blocks.push({ file, line: i + 1, info: (open[2] as string).trim(), text: `${body.join('\n')}\n` });
    i = j;
  }
  return blocks;
}

const SHELL_NAMES = /^(sh|bash|shell|zsh|console|shell-session|terminal)\b/;
const KINDS: readonly string[] = ['sh', 'sh aws', 'sh setup'];

/**
 * What is wrong with a block's fence under the rule above, or undefined. The commands a `sh aws` or `sh setup`
 * block must hold keep those marks from hiding an example that could run here.
 */
export function fenceProblem(block: CodeBlock): string | undefined {
  if (block.info === '') {
    return 'a fence without an info string: name its language (`sh` for a shell example the tests run, `text` for output)';
  }
  if (!SHELL_NAMES.test(block.info)) return undefined;
  if (!KINDS.includes(block.info)) {
    return `a shell example must be fenced as \`sh\` (the tests run it), \`sh aws\` or \`sh setup\`, not \`${block.info}\``;
  }
  const commands = commandLines(block.text);
  if (block.info === 'sh aws' && !commands.some((c) => /(^|\s)(aws|cdk)\s|npm run cdk\b/.test(c))) {
    return '`sh aws` marks an example that needs an AWS account, but no command here calls `aws` or `cdk`: fence it as `sh`';
  }
  if (block.info === 'sh setup' && !commands.some((c) => /\bnpm (ci|start|test)\b|\bdas serve\b/.test(c))) {
    return '`sh setup` marks installing, starting the service or running the tests, but no command here does: fence it as `sh`';
  }
  return undefined;
}

/** The block's commands: lines that are not blank, not comments, and not the continuation of a previous line. */
export function commandLines(text: string): string[] {
  const commands: string[] = [];
  let continued = false;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!continued && trimmed !== '' && !trimmed.startsWith('#')) commands.push(trimmed);
    else if (continued) commands[commands.length - 1] += ` ${trimmed}`;
    continued = trimmed.endsWith('\\');
  }
  return commands;
}
