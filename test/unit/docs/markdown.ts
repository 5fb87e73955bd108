import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository root, where README.md lives. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** README.md and every page under docs/, as paths relative to the repository root. */
export function documentationFiles(): string[] {
  const pages = readdirSync(`${repoRoot}docs`)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...pages];
}

/** Reads a documentation file by its path relative to the repository root. */
export function readDocumentation(path: string): string {
  return readFileSync(`${repoRoot}${path}`, 'utf8');
}

/** A fenced code block: its info string split into language and `key=value` attributes. */
export interface CodeBlock {
  /** The first word of the info string, lower-cased (`ts`, `sh`, or '' when none). */
  readonly language: string;
  /** `key=value` words after the language, e.g. `{ file: 'src/main.ts' }`. */
  readonly attributes: Readonly<Record<string, string>>;
  /** 1-based line of the block's first content line in its file. */
  readonly line: number;
  readonly code: string;
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/**
 * The fenced code blocks of a Markdown text, by CommonMark's rules: a fence closes only
 * with the same character, at least as long, and nothing after it; so a ```` block may
 * hold ``` lines.
 */
export function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = FENCE_OPEN.exec(lines[index] ?? '');
    if (!open) continue;
    const fence = open[1] ?? '';
    const info = (open[2] ?? '').trim();
    const close = new RegExp(`^ {0,3}${fence[0]}{${fence.length},}\\s*$`);
    const start = index + 1;
    let end = start;
    while (end < lines.length && !close.test(lines[end] ?? '')) end++;
    const [language = '', ...words] = info.split(/\s+/);
    const attributes: Record<string, string> = {};
    for (const word of words) {
      const equals = word.indexOf('=');
      if (equals > 0) attributes[word.slice(0, equals)] = word.slice(equals + 1);
    }
    blocks.push({
      language: language.toLowerCase(),
      attributes,
      line: start + 1,
      code: lines.slice(start, end).join('\n'),
    });
    index = end;
  }
  return blocks;
}

/** The text with fenced blocks and inline code blanked out (lines kept), so links in code are not links. */
export function proseOnly(markdown: string): string {
  const lines = markdown.split('\n');
  for (const block of codeBlocks(markdown)) {
    const blockLines = block.code === '' ? 0 : block.code.split('\n').length;
    for (let line = block.line - 1; line < block.line - 1 + blockLines; line++) lines[line] = '';
  }
  return lines.join('\n').replace(/(`+)[^`]*?\1/g, (code) => ' '.repeat(code.length));
}

/** Anchors GitHub gives a file's headings, duplicates numbered `-1`, `-2` as GitHub does. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const prose = markdown.split('\n');
  const blanked = new Set<number>();
  for (const block of codeBlocks(markdown)) {
    // The opening fence, the content and the closing fence are not headings.
    const blockLines = block.code === '' ? 0 : block.code.split('\n').length;
    for (let line = block.line - 2; line <= block.line - 1 + blockLines; line++) blanked.add(line);
  }
  prose.forEach((text, line) => {
    if (blanked.has(line)) return;
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) return;
    const slug = githubSlug(heading[1] ?? '');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  });
  for (const match of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] ?? '');
  return anchors;
}

/**
 * GitHub's heading slug (github-slugger): the rendered text lower-cased, every character
 * that is not a letter, digit, mark, connector (`_`), hyphen or space dropped, spaces
 * turned into hyphens.
 */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML tags
    .replace(/[`*]/g, ''); // code spans and emphasis
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}
