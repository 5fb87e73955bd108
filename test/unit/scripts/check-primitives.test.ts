import { spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPrimitives } from '../../../scripts/check-primitives.mjs';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** A timer started the raw way, once bare and once through the global object. */
const RAW_TIMERS = [
  'export const bare = setTimeout(() => {}, 1);',
  'clearTimeout(bare);',
  'export const held = globalThis.setInterval(() => {}, 1);',
  'self.clearInterval(held);',
  '',
].join('\n');

/** Lazy imports: raw ones (a module of the SDK, a package) and the forms that are allowed. */
const LAZY_IMPORTS = [
  "export const raw = () => import('../tools/memory-tools');",
  'export const spaced = async () => (await import(  "re2js")).RE2JS;',
  "export const typed = (): Promise<typeof import('./resume-plan')> =>",
  "  loadChunk('resume-plan', () => import('./resume-plan'));",
  'export const formatted = () =>',
  '  loadChunk(',
  "    'sandbox-supervisor',",
  "    () => import('../tools/sandbox-supervisor'),",
  '  );',
  "export const quoted = 'import(' + JSON.stringify('./x') + ')';",
  "// A comment may say import('./anything').",
  "export const misnamed = loadChunk(() => import('./no-name'));",
  '',
].join('\n');

describe('one primitive per concern, enforced by npm run lint', () => {
  let sandbox: string;

  beforeAll(async () => {
    sandbox = await mkdtemp(join(tmpdir(), 'airlock-primitives-'));
    await cp(join(repoRoot, 'biome.json'), join(sandbox, 'biome.json'));
    await symlink(join(repoRoot, 'node_modules'), join(sandbox, 'node_modules'), 'dir');
    const plant = async (path: string, source: string) => {
      await mkdir(dirname(join(sandbox, path)), { recursive: true });
      await writeFile(join(sandbox, path), source);
    };
    await plant('src/worker/run/planted-timer.ts', RAW_TIMERS);
    await plant('src/timing/planted-timer.ts', RAW_TIMERS);
    await plant('src/page/planted-id.ts', 'export const id = crypto.randomUUID();\n');
    await plant('src/worker/run/planted-import.ts', LAZY_IMPORTS);
    const long = Array.from({ length: 410 }, (_, line) => `export const v${line} = ${line};`);
    await plant('src/worker/run/planted-long.ts', `${long.join('\n')}\n`);
    await plant(
      'src/worker/run/planted-long-whole.ts',
      `// One piece on purpose: a table read top to bottom.\n${long.join('\n')}\n`,
    );
    await plant(
      'src/worker/tools/planted-cancel.ts',
      [
        "export const cancelled = { ok: false, error: { code: 'tool-cancelled', message: 'x' } };",
        "export const built = toolFailure('tool-cancelled', 'x');",
        '',
      ].join('\n'),
    );
  });

  afterAll(async () => {
    await rm(sandbox, { recursive: true, force: true });
  });

  it('biome refuses a bare timer outside src/timing/ and allows it inside', () => {
    const lint = spawnSync(
      join(repoRoot, 'node_modules/.bin/biome'),
      ['lint', '--vcs-enabled=false', '--reporter=json', 'src'],
      { cwd: sandbox, encoding: 'utf8' },
    );
    const report = JSON.parse(lint.stdout) as {
      diagnostics: { category: string; location: { path: string } }[];
    };
    const refused = report.diagnostics
      .filter(({ category }) => category === 'lint/style/noRestrictedGlobals')
      .map(({ location }) => location.path);
    expect(lint.status).not.toBe(0);
    expect(refused).toEqual(['src/worker/run/planted-timer.ts', 'src/worker/run/planted-timer.ts']);
  });

  it('the primitives check names each raw form outside its owner, with the owner', async () => {
    const found = await checkPrimitives({ baseDir: sandbox });
    expect(found).toEqual([
      expect.stringMatching(/^src\/page\/planted-id\.ts:1: ids come from randomId\(\)/),
      ...[1, 2, 12].map((line) =>
        expect.stringMatching(
          new RegExp(
            `^src/worker/run/planted-import\\.ts:${line}: a lazy import\\(\\) goes through loadChunk`,
          ),
        ),
      ),
      expect.stringMatching(/^src\/worker\/run\/planted-long\.ts: 410 lines; split it/),
      expect.stringMatching(
        /^src\/worker\/run\/planted-timer\.ts:3: timers go through src\/timing\//,
      ),
      expect.stringMatching(
        /^src\/worker\/run\/planted-timer\.ts:4: timers go through src\/timing\//,
      ),
      ...[1, 2].map((line) =>
        expect.stringMatching(
          new RegExp(`^src/worker/tools/planted-cancel\\.ts:${line}: .*toolCancelled\\(\\)`),
        ),
      ),
    ]);
  });

  it('the tree as committed has none', async () => {
    expect(await checkPrimitives()).toEqual([]);
  });
});
