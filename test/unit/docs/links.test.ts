import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  documentationFiles,
  githubSlug,
  headingAnchors,
  proseOnly,
  readDocumentation,
  repoRoot,
} from './markdown';

/**
 * Files other branches add (the proxy and deployment pages, the demo screenshot the e2e
 * test takes). A link to one of them is accepted while the file is missing and checked,
 * anchors included, once it exists; drop an entry when its branch has landed.
 */

interface Link {
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

/** Markdown links and images, and HTML `src`/`href` attributes, outside code. */
function linksOf(file: string): Link[] {
  const links: Link[] = [];
  proseOnly(readDocumentation(file))
    .split('\n')
    .forEach((text, index) => {
      const patterns = [
        /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
        /\b(?:src|href)="([^"]+)"/g,
      ];
      for (const pattern of patterns) {
        for (const match of text.matchAll(pattern)) {
          links.push({ file, line: index + 1, target: match[1] ?? '' });
        }
      }
    });
  return links;
}

/** Why a relative link does not resolve, or undefined when it does. */
function brokenReason(link: Link): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) return undefined; // https:, mailto:: not ours
  const [pathPart = '', anchor] = link.target.split('#', 2);
  const path =
    pathPart === '' ? link.file : normalize(join(dirname(link.file), decodeURI(pathPart)));
  if (path.startsWith('..')) return `${path} is outside the repository`;
  if (!existsSync(join(repoRoot, path))) {
    return `${path} does not exist`;
  }
  if (anchor === undefined) return undefined;
  if (!path.endsWith('.md') || statSync(join(repoRoot, path)).isDirectory()) {
    return `#${anchor} points into ${path}, which is not a Markdown file`;
  }
  const anchors = headingAnchors(readDocumentation(path));
  return anchors.has(decodeURIComponent(anchor).toLowerCase())
    ? undefined
    : `${path} has no heading with the anchor #${anchor}`;
}

describe('documentation links', () => {
  it('slugs headings as GitHub does', () => {
    expect(githubSlug('Testing your agent: `airlock-agents/testing`')).toBe(
      'testing-your-agent-airlock-agentstesting',
    );
    expect(githubSlug('Budgets, rate limits and guardrails')).toBe(
      'budgets-rate-limits-and-guardrails',
    );
    expect(githubSlug('Tools from typed functions (`toolFromFunction`)')).toBe(
      'tools-from-typed-functions-toolfromfunction',
    );
    expect([...headingAnchors('# A\n## A\n```\n# not a heading\n```\n### A')]).toEqual([
      'a',
      'a-1',
      'a-2',
    ]);
  });

  it('every relative link and #anchor in README.md and docs/*.md resolves', () => {
    const files = documentationFiles();
    const links = files.flatMap(linksOf);
    const broken = links.flatMap((link) => {
      const reason = brokenReason(link);
      return reason === undefined ? [] : [`${link.file}:${link.line} (${link.target}): ${reason}`];
    });

    expect(broken).toEqual([]);
    // The check saw the links it is meant to check: every page links back to the README.
    expect(files.length).toBeGreaterThan(10);
    for (const file of files.filter((name) => name !== 'README.md')) {
      expect(
        links.some((link) => link.file === file && link.target.startsWith('../README.md')),
        `${file} links back to the README`,
      ).toBe(true);
    }
  });
});
