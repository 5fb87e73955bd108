import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bundleEntry } from '../../scripts/bundle-entries.mjs';

// Strings that survive minification: option names, class names and URLs each library carries.
const OPENAI_MARKERS = ['dangerouslyAllowBrowser', 'X-Stainless-', 'api.openai.com'];
const DEXIE_MARKERS = ['Dexie', 'dexie'];
const ZOD_MARKERS = ['ZodError', '$ZodType'];
// Chunk and attribute names only `airlock-agents/ai-sdk` and `airlock-agents/otel` carry.
const OPTIONAL_ENTRY_MARKERS = ['tool-approval-request', 'tool-input-available', 'gen_ai.'];

describe('the page bundle', () => {
  it('contains neither openai nor dexie (nor zod) code, while the worker bundle carries openai', async () => {
    const [page, worker] = await Promise.all([bundleEntry('page'), bundleEntry('worker')]);

    for (const marker of [
      ...OPENAI_MARKERS,
      ...DEXIE_MARKERS,
      ...ZOD_MARKERS,
      ...OPTIONAL_ENTRY_MARKERS,
    ]) {
      expect(page.code, `page bundle contains "${marker}"`).not.toContain(marker);
    }
    // The same markers are found where the libraries are bundled, so their absence above means something.
    for (const marker of OPENAI_MARKERS) expect(worker.code).toContain(marker);
    expect(worker.code).toContain('ZodError');
    expect(page.code).toContain('createAgent');
  }, 60_000);

  it('leaves QuickJS and its WebAssembly to the code tool worker: neither the page nor the agent worker carries them', async () => {
    const [page, worker] = await Promise.all([bundleEntry('page'), bundleEntry('worker')]);
    // QuickJS's exported functions are named QTS_*, in its glue code and in quickjs-emscripten-core.
    const core = readFileSync(
      fileURLToPath(import.meta.resolve('quickjs-emscripten-core')),
      'utf8',
    );

    expect(core).toContain('QTS_');
    expect(page.code).not.toContain('QTS_');
    expect(worker.code).not.toContain('QTS_');
  }, 60_000);
});
