/**
 * Issue #48: what `npm publish` would upload is dist/ and the four top-level files, never a
 * test or a source, with every export map target in it and the manifest fields a registry
 * page links from. The first test builds dist/ as `prepack` does and lists the package with
 * `npm pack --dry-run`; the others plant what must not ship.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  exportTargets,
  type PackedFile,
  packageProblems,
  packedFiles,
  TOP_LEVEL_FILES,
} from '../../../scripts/package-contents.mjs';

const manifest = JSON.parse(
  readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
);

/** A manifest with every field the check asks for, whatever package.json holds today. */
const complete = {
  exports: manifest.exports,
  repository: { type: 'git', url: 'git+https://example.com/airlock.git' },
  homepage: 'https://example.com/airlock#readme',
  bugs: { url: 'https://example.com/airlock/issues' },
  keywords: ['agents'],
};

/** A package that may be published: the manifest's export targets and the top-level files. */
function publishable(): PackedFile[] {
  return [...TOP_LEVEL_FILES, ...exportTargets(manifest.exports)].map((path) => ({
    path,
    size: 1,
  }));
}

describe('the published package', () => {
  it('ships dist/, package.json, README, LICENSE and CHANGELOG, every export target, and no test or source', async () => {
    const files = await packedFiles();
    const paths = files.map((file) => file.path);

    expect(packageProblems(manifest, files)).toEqual([]);
    expect(paths).toContain('CHANGELOG.md');
    expect(paths).toEqual(
      expect.arrayContaining(['dist/index.js', 'dist/worker.js', 'dist/types/index.d.ts']),
    );
    // The whole list in the output when it changes shape: what CI saw ship.
    expect(paths.filter((path) => !path.startsWith('dist/')).sort()).toEqual(
      [...TOP_LEVEL_FILES].sort(),
    );
  }, 300_000);

  it('has a repository, homepage, bug tracker and keywords for the registry page', () => {
    expect(manifest.repository).toMatchObject({ type: 'git' });
    expect(packageProblems(manifest, publishable())).toEqual([]);
  });
});

describe('packageProblems', () => {
  it('names every test file, source, dotfile and stray file that would ship, and nothing else', () => {
    const planted = [
      'dist/agent.test.js',
      'dist/agent.spec.js.map',
      'dist/types/agent.test.d.ts',
      'dist/__tests__/run.js',
      'dist/fixtures/rows.json',
      'test/unit/tools.test.ts',
      'src/index.ts',
      'dist/worker.ts',
      'dist/.vite/manifest.json',
      '.env',
      'examples/vite-vanilla/index.html',
    ];
    const files = [...publishable(), ...planted.map((path) => ({ path, size: 1 }))];

    expect(packageProblems(complete, files)).toEqual([
      '.env is a dotfile and would ship.',
      'dist/.vite/manifest.json is a dotfile and would ship.',
      'dist/__tests__/run.js is a test file and would ship.',
      'dist/agent.spec.js.map is a test file and would ship.',
      'dist/agent.test.js is a test file and would ship.',
      'dist/fixtures/rows.json is a test file and would ship.',
      'dist/types/agent.test.d.ts is a test file and would ship.',
      'dist/worker.ts is a source file and would ship.',
      'examples/vite-vanilla/index.html is outside dist/ and would ship.',
      'src/index.ts is a source file and would ship.',
      'test/unit/tools.test.ts is a test file and would ship.',
    ]);
  });

  it('keeps the testing entry, which is the package’s own scripted model and not a test', () => {
    const files = [
      ...publishable(),
      { path: 'dist/types/testing/model-server.d.ts', size: 1 },
      { path: 'dist/testing-remote-CrdiNTih.js.map', size: 1 },
    ];
    expect(packageProblems(complete, files)).toEqual([]);
  });

  it('names a missing changelog and a missing export target', () => {
    const files = publishable().filter(
      (file) => file.path !== 'CHANGELOG.md' && file.path !== 'dist/types/worker.d.ts',
    );
    expect(packageProblems(complete, files)).toEqual([
      'CHANGELOG.md is missing from the package.',
      'dist/types/worker.d.ts is named by the export map but missing from the package.',
    ]);
  });

  it('names missing or wrong-typed registry fields of the manifest', () => {
    const wrong = {
      exports: manifest.exports,
      repository: 'github:airlock/airlock',
      homepage: 42,
      bugs: { url: 'javascript:alert(1)' },
      keywords: ['agents', ''],
    };
    expect(packageProblems(wrong, publishable())).toEqual([
      'package.json: `repository.url` must be a git+https://….git URL.',
      'package.json: `homepage` must be an https URL.',
      'package.json: `bugs.url` must be an https URL.',
      'package.json: `keywords` must be a list of words.',
    ]);
    expect(packageProblems({ exports: manifest.exports }, publishable())).toHaveLength(4);
  });
});
