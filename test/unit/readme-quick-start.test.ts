import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readmeFiles } from '../example/readme-files';

const root = new URL('../../', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');
const example = new URL('examples/vite-vanilla/', root);

describe("the README's Quick start", () => {
  it('shows the config, the worker entry and the page code of the example app', () => {
    expect(readmeFiles(readme).map((file) => file.path)).toEqual([
      'vite.config.ts',
      'src/agent.worker.ts',
      'src/main.ts',
    ]);
  });

  it('has every file= block byte for byte as the file of that path in examples/vite-vanilla', () => {
    for (const file of readmeFiles(readme)) {
      expect(file.content, file.path).toBe(readFileSync(new URL(file.path, example), 'utf8'));
    }
  });
});

describe('readmeFiles', () => {
  it('reads only blocks that name a file, keeping their lines exactly', () => {
    const markdown = [
      '```sh',
      'npm install airlock-agents zod',
      '```',
      '```ts file=src/a.ts',
      "import { a } from 'a';",
      '',
      '  a();',
      '```',
      '```html title="x" file=index.html',
      '<p></p>',
      '```',
    ].join('\n');

    expect(readmeFiles(markdown)).toEqual([
      { path: 'src/a.ts', content: "import { a } from 'a';\n\n  a();\n" },
      { path: 'index.html', content: '<p></p>\n' },
    ]);
  });
});
