import { join, posix } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import {
  type CodeBlock,
  codeBlocks,
  documentationFiles,
  readDocumentation,
  repoRoot,
} from './markdown';

const TYPESCRIPT = new Set(['ts', 'typescript']);

/** A TypeScript block of a documentation file, given a path of its own to be compiled at. */
interface Snippet extends CodeBlock {
  readonly file: string;
  /** Where the program sees it: under a directory that does not exist, inside the repository. */
  readonly virtualPath: string;
}

/**
 * Every ```ts block of README.md and docs/*.md. A block is a module of its own. One with
 * `file=src/main.ts` in its info string is placed at that path (per documentation file),
 * so the blocks of one example can import each other as the real files do.
 */
function snippets(): Snippet[] {
  return documentationFiles().flatMap((file) =>
    codeBlocks(readDocumentation(file))
      .filter((block) => TYPESCRIPT.has(block.language))
      .map((block) => {
        const name = block.attributes.file ?? `line-${block.line}.ts`;
        return {
          ...block,
          file,
          virtualPath: posix.join(repoRoot, '.docs-snippets', file, name),
        };
      }),
  );
}

/** The repository's compiler options (paths to src/, DOM and worker libs, Node types), for snippets. */
function compilerOptions(): ts.CompilerOptions {
  const configPath = join(repoRoot, 'tsconfig.json');
  const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, repoRoot, undefined, configPath);
  return {
    ...parsed.options,
    // Test-runner types are the repository's own business, not a reader's: snippets get the
    // browser (DOM and worker libs above), Node for server code, and Vite's `?worker&url`.
    types: ['node', 'vite/client'],
    noEmit: true,
    allowJs: false,
    checkJs: false,
    // A block without imports is still a module: `const agent` in two blocks must not clash.
    moduleDetection: ts.ModuleDetectionKind.Force,
  };
}

/** One Program over every snippet; returns each diagnostic as `file:line: TSnnnn message`. */
function typeCheck(blocks: readonly Snippet[]): string[] {
  const options = compilerOptions();
  const byPath = new Map(blocks.map((block) => [block.virtualPath, block]));
  const host = ts.createCompilerHost(options, true);
  const { getSourceFile, fileExists, readFile, directoryExists } = host;
  host.fileExists = (path) => byPath.has(path) || fileExists.call(host, path);
  // The blocks' directories exist only here: without this, an import of one block by
  // another (`./text-tools`) is not even looked for.
  const blockDirectories = new Set([...byPath.keys()].map((path) => posix.dirname(path)));
  host.directoryExists = (path) =>
    blockDirectories.has(path) || (directoryExists?.call(host, path) ?? true);
  host.readFile = (path) => byPath.get(path)?.code ?? readFile.call(host, path);
  host.getSourceFile = (path, languageVersion, ...rest) => {
    const block = byPath.get(path);
    return block
      ? ts.createSourceFile(path, block.code, languageVersion, true, ts.ScriptKind.TS)
      : getSourceFile.call(host, path, languageVersion, ...rest);
  };
  const program = ts.createProgram({ rootNames: [...byPath.keys()], options, host });
  const problems: string[] = [];
  for (const block of blocks) {
    const source = program.getSourceFile(block.virtualPath);
    if (!source) {
      problems.push(`${block.file}:${block.line}: the block was not compiled`);
      continue;
    }
    const diagnostics = [
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ];
    for (const diagnostic of diagnostics) {
      const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
      problems.push(`${block.file}:${block.line + line}: TS${diagnostic.code} ${message}`);
    }
  }
  return problems;
}

/**
 * A block that calls `agent.toolCalls()`, which the package does not have (the audit log is
 * `agent.memory.toolCalls()`): compiled with the documentation's blocks, in the same
 * Program, to prove the check fails on an API that does not exist.
 */
const BROKEN: Snippet = {
  language: 'ts',
  attributes: {},
  line: 1,
  file: 'broken.md',
  virtualPath: posix.join(repoRoot, '.docs-snippets', 'broken.md', 'line-1.ts'),
  code: [
    "import type { Agent } from 'airlock-agents';",
    'declare const agent: Agent;',
    'await agent.toolCalls();',
  ].join('\n'),
};

describe('documentation code blocks', () => {
  const blocks = snippets();
  let problems: string[] | undefined;
  /** One Program for every block and the broken one: compiling src/ once is most of the time. */
  const check = () => {
    problems ??= typeCheck([...blocks, BROKEN]);
    return problems;
  };

  it('names every TypeScript block a path of its own', () => {
    const paths = blocks.map((block) => block.virtualPath);
    expect(paths.filter((path, index) => paths.indexOf(path) !== index)).toEqual([]);
    // The parser found the blocks: README.md and docs/ hold well over ten.
    expect(blocks.length).toBeGreaterThan(10);
  });

  it('type-checks every ```ts block of README.md and docs/*.md against the package', () => {
    expect(check().filter((problem) => !problem.startsWith('broken.md:'))).toEqual([]);
  }, 120_000);

  it('fails a block that uses an API the package does not have, naming its file and line', () => {
    expect(check().filter((problem) => problem.startsWith('broken.md:'))).toEqual([
      expect.stringMatching(
        /^broken\.md:3: TS2339 Property 'toolCalls' does not exist on type 'Agent'/,
      ),
    ]);
  }, 120_000);
});
