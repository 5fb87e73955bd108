/**
 * The README's Quick start names the file each code block belongs to (```ts file=src/main.ts),
 * so a test can hold the blocks to the example app and the acceptance test can write them
 * into a fresh app, as a reader would paste them.
 */

/** A fenced block of README.md that names its file, and that file's exact content. */
export interface ReadmeFile {
  /** The path in the info string, relative to the app's root. */
  readonly path: string;
  /** The block's lines, each ended by `\n`, as the file holds them. */
  readonly content: string;
}

/** Every fenced block whose info string carries `file=<path>`, in README order. */
export function readmeFiles(markdown: string): ReadmeFile[] {
  const files: ReadmeFile[] = [];
  const lines = markdown.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const path = /^```\S*\s+(?:.*\s)?file=(\S+)/.exec(lines[index] ?? '')?.[1];
    if (path === undefined) continue;
    const end = lines.indexOf('```', index + 1);
    if (end === -1) throw new Error(`README.md: the block for ${path} is never closed.`);
    const content = lines.slice(index + 1, end).map((line) => `${line}\n`);
    files.push({ path, content: content.join('') });
    index = end;
  }
  return files;
}
