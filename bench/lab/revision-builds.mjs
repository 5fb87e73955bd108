// Bench pages built from another revision's src/, for same-run comparisons (`--against`),
// and the options those comparisons take: runs made minutes apart on a shared 2-core machine
// differ by more than most changes, pages a few seconds apart do not.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { build, preview } from 'vite';
import { repoRoot } from '../lib/vite-setup.mjs';

/**
 * The src/ of `revision`, exported under `cache` where the bench's builds find the
 * repository's packages.
 * @param {string} revision
 * @param {string} cache a folder under node_modules/
 */
export function exportSource(revision, cache) {
  const commit = execFileSync('git', ['rev-parse', '--short', revision], { cwd: repoRoot })
    .toString()
    .trim();
  const dir = `${cache}src-${commit}/`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tarball = execFileSync('git', ['archive', commit, 'src'], {
    cwd: repoRoot,
    maxBuffer: 256 * 1024 * 1024,
  });
  execFileSync('tar', ['-x', '-C', dir], { input: tarball });
  return { commit, srcDir: `${dir}src/` };
}

/**
 * Builds one bench page with Airlock's entries resolved into `srcDir`, and serves it.
 * @param {{ shared: Awaited<ReturnType<typeof import('../lib/vite-setup.mjs').sharedConfig>>; outDir: string; page: string; srcDir: string }} options
 *   `page` is the page's folder under bench/ (`peers`, `scale`).
 */
export async function servePageFrom({ shared, outDir, page, srcDir }) {
  // The repository's aliases are a list (vite.config.ts), each entry pointing into src/.
  const aliases = /** @type {{ find: RegExp; replacement: string }[]} */ (shared.resolve.alias);
  const resolve = {
    alias: aliases.map((entry) => ({
      ...entry,
      replacement: entry.replacement.replace(`${repoRoot}src/`, srcDir),
    })),
  };
  await build({
    ...shared,
    resolve,
    logLevel: 'warn',
    build: {
      outDir,
      emptyOutDir: true,
      chunkSizeWarningLimit: 4_000,
      rollupOptions: { input: { [page]: `bench/${page}/index.html` } },
    },
  });
  const server = await preview({
    ...shared,
    build: { outDir },
    preview: { host: '127.0.0.1', port: 0, cors: { origin: '*' } },
  });
  return { server, origin: server.resolvedUrls?.local[0]?.replace(/\/$/, '') ?? '' };
}

/**
 * The value of `--<name>=<value>` on the command line, if given.
 * @param {string} name
 */
export function option(name) {
  return new RegExp(`^--${name}=(.+)$`).exec(
    process.argv.find((arg) => arg.startsWith(`--${name}=`)) ?? '',
  )?.[1];
}

/**
 * `--pages=<n>`, pages per contestant in a same-run comparison, or `fallback`.
 * @param {number} fallback
 */
export function pagesOption(fallback) {
  const pages = Number(option('pages') ?? fallback);
  if (!Number.isInteger(pages) || pages < 1)
    throw new Error(
      `--pages must be a whole number of pages, at least 1 (got ${option('pages')}).`,
    );
  return pages;
}
