// What `npm publish` would upload, and whether it should: `node scripts/package-contents.mjs`
// builds dist/ (as `prepack` does before a publish), lists the package's files with
// `npm pack --dry-run` and names every problem. test/unit/scripts/package-contents.test.ts
// runs the same check in `npm test`, so CI fails before a test file or a source ships.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** Files npm ships beside `files` (package.json, README, LICENSE) and the changelog we add. */
export const TOP_LEVEL_FILES = ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'];

/** Paths that are tests or test data, wherever they sit: `dist/testing/` is an entry, not a test. */
const TEST_PATH =
  /(^|\/)(test|tests|__tests__|__mocks__|__snapshots__|fixtures?)\/|\.(test|spec|bench)\.[cm]?[jt]sx?(\.map)?$|\.(test|spec)\.d\.[cm]?ts$/;

/** TypeScript sources (declarations are not sources). */
const SOURCE_PATH = /(^|\/)src\/|(?<!\.d)\.[cm]?tsx?$/;

/**
 * @typedef {object} PackedFile
 * @property {string} path Relative to the package root, `/`-separated.
 * @property {number} size Bytes.
 */

/**
 * Everything wrong with a package of these files and this manifest, one sentence each; empty
 * when it may be published.
 * @param {{ exports?: unknown; repository?: unknown; homepage?: unknown; bugs?: unknown; keywords?: unknown }} manifest package.json
 * @param {readonly PackedFile[]} files What `npm pack --dry-run` lists.
 * @returns {string[]}
 */
export function packageProblems(manifest, files) {
  /** @type {string[]} */
  const problems = [];
  const paths = new Set(files.map((file) => file.path));
  for (const path of [...paths].sort()) {
    if (TEST_PATH.test(path)) problems.push(`${path} is a test file and would ship.`);
    else if (SOURCE_PATH.test(path)) problems.push(`${path} is a source file and would ship.`);
    else if (path.split('/').some((part) => part.startsWith('.')))
      problems.push(`${path} is a dotfile and would ship.`);
    else if (!path.startsWith('dist/') && !TOP_LEVEL_FILES.includes(path))
      problems.push(`${path} is outside dist/ and would ship.`);
  }
  for (const path of TOP_LEVEL_FILES) {
    if (!paths.has(path)) problems.push(`${path} is missing from the package.`);
  }
  for (const target of exportTargets(manifest.exports)) {
    if (!paths.has(target))
      problems.push(`${target} is named by the export map but missing from the package.`);
  }
  problems.push(...manifestProblems(manifest));
  return problems;
}

/**
 * The fields a registry page and `npm` itself read to send users to the project.
 * @param {{ repository?: unknown; homepage?: unknown; bugs?: unknown; keywords?: unknown }} manifest
 * @returns {string[]}
 */
function manifestProblems(manifest) {
  /** @type {string[]} */
  const problems = [];
  const repository = /** @type {{ url?: unknown } | undefined} */ (manifest.repository);
  if (typeof repository?.url !== 'string' || !/^git\+https:\/\/.+\.git$/.test(repository.url))
    problems.push('package.json: `repository.url` must be a git+https://….git URL.');
  if (typeof manifest.homepage !== 'string' || !/^https:\/\//.test(manifest.homepage))
    problems.push('package.json: `homepage` must be an https URL.');
  const bugs = /** @type {{ url?: unknown } | undefined} */ (manifest.bugs);
  if (typeof bugs?.url !== 'string' || !/^https:\/\//.test(bugs.url))
    problems.push('package.json: `bugs.url` must be an https URL.');
  const keywords = manifest.keywords;
  if (
    !Array.isArray(keywords) ||
    keywords.length === 0 ||
    !keywords.every((keyword) => typeof keyword === 'string' && keyword.length > 0)
  )
    problems.push('package.json: `keywords` must be a list of words.');
  return problems;
}

/**
 * Every file an export map points at (`./dist/x.js` → `dist/x.js`), through any nesting of
 * conditions.
 * @param {unknown} exports
 * @returns {string[]}
 */
export function exportTargets(exports) {
  if (typeof exports === 'string') return [exports.replace(/^\.\//, '')];
  if (exports === null || typeof exports !== 'object') return [];
  return Object.values(exports).flatMap((value) => exportTargets(value));
}

/**
 * Builds dist/ and lists what `npm publish` would upload from `root`. The build runs apart
 * from `npm pack` (`--ignore-scripts`): the build's output would otherwise be mixed into
 * the JSON that `npm pack` prints.
 * @param {string} [root]
 * @returns {Promise<PackedFile[]>}
 */
export async function packedFiles(root = repoRoot) {
  await run('npm', ['run', 'build'], root);
  const output = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], root);
  const [packed] = /** @type {Array<{ files: PackedFile[] }>} */ (JSON.parse(output));
  if (!packed) throw new Error('`npm pack --dry-run --json` listed no package.');
  return packed.files.map(({ path, size }) => ({ path, size }));
}

/**
 * Runs a command to its end and resolves with its stdout; rejects with all its output.
 * @param {string} command
 * @param {string[]} args
 * @param {string} cwd
 * @returns {Promise<string>}
 */
function run(command, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(stdout);
      else
        reject(new Error(`\`${command} ${args.join(' ')}\` exited ${code}:\n${stdout}${stderr}`));
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { readFile } = await import('node:fs/promises');
  const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
  const files = await packedFiles();
  const byFolder = new Map();
  for (const { path, size } of files) {
    const parts = path.split('/');
    const folder =
      parts.length > 1 ? `${parts.slice(0, Math.min(parts.length - 1, 2)).join('/')}/` : path;
    const [count, bytes] = byFolder.get(folder) ?? [0, 0];
    byFolder.set(folder, [count + 1, bytes + size]);
  }
  console.log(`${manifest.name}@${manifest.version}: ${files.length} files`);
  for (const [folder, [count, bytes]] of [...byFolder].sort()) {
    console.log(
      `  ${folder.padEnd(40)} ${String(count).padStart(4)} files ${(bytes / 1024).toFixed(1).padStart(8)} KB`,
    );
  }
  const problems = packageProblems(manifest, files);
  for (const problem of problems) console.log(`problem: ${problem}`);
  if (problems.length > 0) process.exitCode = 1;
}
