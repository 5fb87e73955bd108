// One primitive per concern (#47): raw forms that biome's rules cannot single out, banned
// outside the one file that owns each concern; and no file of src/ past MAX_LINES without a
// comment saying why it stays one piece. `npm run lint` runs it.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** Each banned form, the one file (or folder, ending in `/`) allowed it, and why. */
const bans = [
  {
    form: /\brandomUUID\s*\(/,
    owner: 'src/runtime/random-id.ts',
    reason: 'ids come from randomId(): randomUUID is missing on plain-HTTP pages',
  },
  {
    // Also through toolFailure(), the constructor toolCancelled() itself builds on.
    form: /code: 'tool-cancelled'|(f|toolF)ailure\('tool-cancelled'/,
    owner: 'src/tools/tool-cancelled.ts',
    reason: 'a cancelled call is built by toolCancelled(), one shape everywhere',
  },
  {
    // The bare globals are biome's (noRestrictedGlobals); this catches them through an object.
    form: /\b(globalThis|self|window)\.(set|clear)(Timeout|Interval)\b/,
    owner: 'src/timing/',
    reason: 'timers go through src/timing/ (later, every, waitFor, sleep)',
  },
];

/** The one file whose calls may hold a lazy `import()` of the SDK's modules. */
const chunkOwner = 'src/runtime/load-chunk.ts';

/** A dynamic `import()` of a module named by a literal; not `typeof import(…)`, not inside a string. */
const lazyImport = /(?<![\w'"`.])(?<!typeof\s+)import\(\s*['"`]/g;

/** What must come right before it: the loader passed to `loadChunk` with the chunk's name. */
const throughLoadChunk = /loadChunk\(\s*(['"])[\w./-]+\1,\s*\(\)\s*=>\s*$/;

/**
 * Every lazy `import()` under `src/` that does not go through `loadChunk(name, () => import(…))`:
 * a chunk that cannot load must end as `worker-load-failed` naming it, never as the browser's
 * raw error. Read over the whole file, since a formatted call spans lines.
 * @param {string} path
 * @param {string} text
 * @returns {string[]}
 */
function rawLazyImports(path, text) {
  if (path === chunkOwner) return [];
  /** @type {string[]} */
  const found = [];
  for (const match of text.matchAll(lazyImport)) {
    const before = text.slice(0, match.index);
    const line = before.split('\n').length;
    const lineStart = before.lastIndexOf('\n') + 1;
    if (/^\s*(\*|\/\/)/.test(text.slice(lineStart, match.index))) continue;
    if (throughLoadChunk.test(before.slice(-200))) continue;
    found.push(
      `${path}:${line}: a lazy import() goes through loadChunk('<chunk>', () => import(…)), which types a chunk that cannot load (${chunkOwner})`,
    );
  }
  return found;
}

/** The longest a file of `src/` grows before it is split or says why it is one piece. */
const MAX_LINES = 400;

/** The comment that keeps a longer file whole: `One piece … on purpose: <why>`. */
const onePiece = /^\s*(\*|\/\/).*\bone piece\b/im;

/**
 * Lists every use of a banned form outside its owner under `src/` of `baseDir`, and every
 * file longer than {@link MAX_LINES} lines that does not say why it is one piece.
 * @param {{ baseDir?: string }} [options]
 * @returns {Promise<string[]>}
 */
export async function checkPrimitives({ baseDir = repoRoot } = {}) {
  /** @type {string[]} */
  const found = [];
  const files = await readdir(join(baseDir, 'src'), { recursive: true });
  for (const file of files.filter((name) => name.endsWith('.ts')).sort()) {
    const path = relative(baseDir, join(baseDir, 'src', file)).replaceAll('\\', '/');
    const text = await readFile(join(baseDir, path), 'utf8');
    const lines = text.split('\n');
    for (const { form, owner, reason } of bans) {
      if (owner.endsWith('/') ? path.startsWith(owner) : path === owner) continue;
      lines.forEach((line, index) => {
        const comment = /^\s*(\*|\/\/)/.test(line);
        if (!comment && form.test(line)) found.push(`${path}:${index + 1}: ${reason} (${owner})`);
      });
    }
    found.push(...rawLazyImports(path, text));
    const lineCount = text.endsWith('\n') ? lines.length - 1 : lines.length;
    if (lineCount > MAX_LINES && !onePiece.test(text))
      found.push(
        `${path}: ${lineCount} lines; split it, or say in a comment why it is one piece (over ${MAX_LINES})`,
      );
  }
  return found;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const found = await checkPrimitives();
  for (const line of found) console.error(`error ${line}`);
  process.exitCode = found.length > 0 ? 1 : 0;
}
