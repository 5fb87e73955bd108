/**
 * Two panels of the built demo, driven in Chromium (`e2e`), Firefox (`e2e-firefox`) and
 * WebKit (`e2e-webkit`): the refused exfiltration of the information-flow panel (#50), and
 * the on-device model's load progress, storage and Clear (#51). A file apart from
 * demo.e2e.test.ts, whose flows share one conversation: these panels have agents of their own.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ATTACKER_ADDRESS,
  OFFSITE_PAGE_URL,
  OWN_ADDRESS,
  PRIVATE_NOTE,
} from '../../demo/shared/exfiltration-scenario';
import { useBuiltDemo } from './built-demo';
import { type DemoPage, eventually, texts, WAIT_MS } from './demo-page';
import { ENGINE, SCREENSHOTS } from './engine';

/** llama.cpp's WebAssembly build needs memory64, which WebKitGTK here lacks (docs/models.md). */
const RUNS_WASM = ENGINE !== 'webkit';

const demo = useBuiltDemo({
  prefix: 'airlock-demo-panels-',
  viewport: { width: 1400, height: 900 },
});
let page: DemoPage;

beforeAll(() => {
  page = demo.page;
});

/** Waits for the on-device run to end; its state, with the error shown when there is one. */
async function onDeviceOutcome(): Promise<string> {
  const state = await settledState('ondevice', ['done', 'error']);
  return state === 'error'
    ? `error: ${await page.locator('#ondevice-error').textContent()}`
    : `${state}`;
}

/** Waits until `#id`'s `data-state` is one of `states`; returns it. */
async function settledState(id: string, states: readonly string[]): Promise<string | null> {
  await page.waitForFunction(
    ({ element, wanted }) => wanted.includes(document.getElementById(element)?.dataset.state ?? ''),
    { element: id, wanted: [...states] },
    { timeout: WAIT_MS * 4 },
  );
  return page.locator(`#${id}`).getAttribute('data-state');
}

describe('the information-flow panel', () => {
  it('shows the model obeying a web page that asks for the private note, and the flow policy refusing it: the rule, the untrusted source, an empty outbox', async () => {
    await page.locator('#flow-run').click();
    expect(await settledState('flow-demo', ['done', 'error'])).toBe('done');

    // The injection worked on the model: it called send_email to the page's address, with the note.
    const attempt = page.locator('#flow-steps li[data-tool="send_email"]');
    expect(await attempt.count()).toBe(1);
    expect(await attempt.textContent()).toContain(ATTACKER_ADDRESS);
    expect(await attempt.textContent()).toContain(PRIVATE_NOTE);
    expect(await texts(page.locator('#flow-steps li[data-tool="fetch_page"]'))).toEqual([
      expect.stringContaining(OFFSITE_PAGE_URL),
    ]);

    // Airlock refused it: the rule that decided, the labels, and the untrusted source named.
    const refusal = page.locator('#flow-refusal');
    expect(await refusal.getAttribute('data-rule')).toBe('destination-refused');
    const said = (await refusal.textContent()) ?? '';
    expect(said).toContain(`Refused: send_email → email:${ATTACKER_ADDRESS}`);
    expect(said).toContain('Rule: destination-refused.');
    expect(said).toContain('The context held: private, untrusted.');
    expect(said).toContain('Untrusted in the context: fetch_page (tool).');
    expect(said).not.toContain(OWN_ADDRESS);

    // Nothing left: the outbox is empty, and the model's answer says it was stopped.
    expect(await page.locator('#flow-outbox li').count()).toBe(0);
    expect(await page.locator('#flow-demo').getAttribute('data-sent')).toBe('0');
    expect(await page.locator('#flow-outbox-count').textContent()).toBe(
      'Outbox: empty, nothing was sent.',
    );
    expect(await page.locator('#flow-answer').textContent()).toContain('flow-refused');
    await page.screenshot({ path: `${SCREENSHOTS}/20-flow-refused.png` });
  });

  it('refuses it again on a second run, still sending nothing', async () => {
    await page.locator('#flow-run').click();
    expect(await settledState('flow-demo', ['done', 'error'])).toBe('done');
    expect(await page.locator('#flow-refusal').getAttribute('data-rule')).toBe(
      'destination-refused',
    );
    expect(await page.locator('#flow-demo').getAttribute('data-sent')).toBe('0');
  });
});

describe('the on-device model panel', () => {
  it.runIf(RUNS_WASM)(
    'shows the weights checked, downloaded with their bytes, loaded and ready while the answer waits, then where they are kept and their size',
    async () => {
      expect(await page.locator('#ondevice').getAttribute('data-cached-bytes')).toBe('0');
      await page.locator('#ondevice-run').click();
      expect(await onDeviceOutcome()).toBe('done');

      const phases = await texts(page.locator('#ondevice-phases li'));
      expect(phases).toEqual([
        'Checking the cache for the weights…',
        expect.stringMatching(/^Downloading: [\d.]+ KB of [\d.]+ KB$/),
        'Loading the weights into llama.cpp…',
        'Ready (downloaded).',
      ]);
      expect(await page.locator('#ondevice-answer').textContent()).toMatch(
        /^Answer \(gibberish: a tiny test model, not a language model\): “.+”$/s,
      );
      const bytes = Number(await page.locator('#ondevice').getAttribute('data-cached-bytes'));
      expect(bytes).toBeGreaterThan(100_000);
      expect(await page.locator('#ondevice-storage').textContent()).toContain(
        'cache “airlock-models”: /models/tiny-llama.gguf',
      );
      await page.screenshot({ path: `${SCREENSHOTS}/21-ondevice-ready.png` });
    },
  );

  it.runIf(RUNS_WASM)(
    'clears the cached weights with Clear, after which the next answer downloads them again',
    async () => {
      await page.locator('#ondevice-clear').click();
      await eventually(() => page.locator('#ondevice').getAttribute('data-cached-bytes')).toBe('0');
      expect(await page.locator('#ondevice-storage').textContent()).toContain(
        'No model weights are cached on this device.',
      );

      await page.locator('#ondevice-run').click();
      expect(await onDeviceOutcome()).toBe('done');
      expect(await texts(page.locator('#ondevice-phases li'))).toContain('Ready (downloaded).');
      expect(
        Number(await page.locator('#ondevice').getAttribute('data-cached-bytes')),
      ).toBeGreaterThan(100_000);
    },
  );

  it.runIf(!RUNS_WASM)(
    'says in WebKit, which lacks WebAssembly memory64, that the model is unavailable, with the typed error',
    async () => {
      await page.locator('#ondevice-run').click();
      expect(await settledState('ondevice', ['done', 'error'])).toBe('error');
      expect(await page.locator('#ondevice').getAttribute('data-error-code')).toBe(
        'model-unavailable',
      );
      expect(await page.locator('#ondevice-error').textContent()).toMatch(
        /^model-unavailable \(unsupported\): .+/,
      );
      expect(await page.locator('#ondevice-progress').textContent()).toBe(
        'The on-device model cannot run in this browser.',
      );
      await page.screenshot({ path: `${SCREENSHOTS}/21-ondevice-unavailable.png` });
    },
  );

  it('raised no uncaught error in the page', async () => {
    expect(await demo.browser.pageErrors()).toEqual([]);
  });
});
