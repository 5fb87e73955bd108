/**
 * The demo, built for production and served by the demo server with the offline model,
 * driven in real Chromium (project `e2e`), Firefox (`e2e-firefox`) or WebKit (`e2e-webkit`): streamed answers and tool cards, an approval that changes the
 * page, Stop, memory, what survives a reload, and the page's responsiveness with the agent
 * loop in Airlock's worker and on the page. Screenshots go to test-results/e2e/; with
 * AIRLOCK_SCREENSHOTS=1, Chromium also rewrites the README's images in docs/images/
 * (opt-in: every run draws them a little differently, and CI must not dirty the tree).
 */
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LONG_ANSWER } from '../../demo/model/long-answer';
import { RESPONSIVENESS_SCENARIO } from '../../demo/shared/responsiveness-test';
import { THEME_SHADES } from '../../demo/shared/theme-colors';
import { fakeWeather } from '../../demo/tools/fake-weather';
import { type DemoServer, startDemoServer } from '../../scripts/demo-server.mjs';
import { type ModelServer, startModelServer } from '../../src/testing';
import { useBuiltDemo } from './built-demo';
import {
  answerLengths,
  ask,
  attribute,
  type DemoPage,
  eventually,
  finishedRuns,
  lastAnswer,
  recordAnswerLengths,
  send,
  texts,
  WAIT_MS,
  waitForRunEnd,
} from './demo-page';
import { ENGINE, SCREENSHOTS } from './engine';

/** Where the README's images go, when this run is asked to redraw them. */
const DOCS_IMAGES =
  ENGINE === 'chromium' && process.env.AIRLOCK_SCREENSHOTS === '1' ? 'docs/images' : undefined;
/** The window the tests run in; one test checks the layout on a 1280×800 screen. */
const VIEWPORT = { width: 1400, height: 900 };

const demo = useBuiltDemo({
  prefix: 'airlock-demo-',
  viewport: VIEWPORT,
  // The workers' dependencies in chunks of their own, as apps that split vendor code
  // have them: Firefox checks a worker module's static imports against the iframe
  // sandbox's CSP, so the iframe tier must start from such a bundle too.
  worker: {
    rolldownOptions: {
      output: { codeSplitting: { groups: [{ name: 'vendor', test: /node_modules/ }] } },
    },
  },
});
let page: DemoPage;

beforeAll(() => {
  page = demo.page;
});

async function openPage(at: DemoServer = demo.server): Promise<void> {
  await page.goto(at.url);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: WAIT_MS });
}

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: `${SCREENSHOTS}/${name}.png` });
}

/** Redraws docs/images/`name`.png at the README's 1280×800, when DOCS_IMAGES is set. */
async function docsImage(name: string): Promise<void> {
  if (!DOCS_IMAGES) return;
  mkdirSync(DOCS_IMAGES, { recursive: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  try {
    // The log keeps its scroll position across the resize: its newest entry back in view.
    await page.evaluate(() =>
      document.querySelector('#log')?.lastElementChild?.scrollIntoView({ block: 'end' }),
    );
    await page.screenshot({ path: `${DOCS_IMAGES}/${name}.png` });
  } finally {
    await page.setViewportSize(VIEWPORT);
  }
}

/** The Send button's background: it is drawn in the page's accent colour. */
function sendButtonColour(): Promise<string> {
  return page.locator('#send').evaluate((button) => getComputedStyle(button).backgroundColor);
}

/** `#rrggbb` as a computed style spells it. */
function rgb(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((at) => Number.parseInt(hex.slice(at, at + 2), 16));
  return `rgb(${r}, ${g}, ${b})`;
}

/** A finished run's footer in the log. */
const FOOTER = '#log .run-footer[data-reason]';

const lastCard = (tool: string) => page.locator(`#log .tool-card[data-tool="${tool}"]`).last();

describe('the demo, built and served', () => {
  it('answers a suggestion clicked the moment the page loads, while the agent is still starting', async () => {
    // No conversation is stored yet: the case in which the first message used to vanish.
    await page.goto(demo.server.url);
    const atLoad = await page.evaluate(() => ({
      status: document.getElementById('agent-status')?.dataset.state,
      text: document.getElementById('agent-status')?.textContent?.trim(),
      chip: document.querySelector<HTMLButtonElement>('.suggestion')?.disabled,
      send: document.querySelector<HTMLButtonElement>('#send')?.disabled,
    }));
    // Clicked at once; the click waits, as a visitor's second click would, for the chip to
    // be enabled, which it is once start-up has opened a conversation.
    const chip = page.locator('.suggestion').first();
    const question = (await chip.textContent()) ?? '';
    await chip.click();
    await waitForRunEnd(page, 0);

    expect(atLoad).toEqual({
      status: 'starting',
      text: 'Starting the agent…',
      chip: true,
      send: true,
    });
    expect(question).toBe('What is the weather in Paris and Oslo?');
    expect(await texts(page.locator('#log .turn.user .bubble'))).toEqual([question]);
    expect(await page.locator(FOOTER).last().getAttribute('data-reason')).toBe('stop');
    expect(await page.locator('#timeline .timeline-run').count()).toBe(1);
    expect(await attribute(page.locator('#timeline .timeline-run'), 'data-reason')).toBe('stop');
    const cards = page.locator('#log .tool-card[data-tool="get_weather"]');
    expect(await cards.count()).toBe(2);
    for (const city of ['Paris', 'Oslo']) expect(await lastAnswer(page)).toContain(city);
    expect(await attribute(page.locator('#agent-status'), 'data-state')).toBe('ready');
    await screenshot('00-first-message');
    await docsImage('demo');
  });

  it('says on the page that the offline model answers', async () => {
    expect(await page.locator('#model-badge').textContent()).toMatch(/Offline demo model/);
    expect(await attribute(page.locator('#model-badge'), 'data-offline')).toBe('true');
  });

  it('answers a weather question with a sandboxed tool card and an answer that streams in', async () => {
    await recordAnswerLengths(page);

    expect(await ask(page, 'What is the weather in Paris?')).toBe('stop');

    const card = lastCard('get_weather');
    expect(await attribute(card, 'data-state')).toBe('ok');
    expect(await card.locator('.tool-tier').textContent()).toBe('sandbox worker');
    expect(await card.locator('.tool-result').textContent()).toContain('"city":"Paris"');
    const { temperatureC, sky } = fakeWeather('Paris');
    const expected = `In Paris it is ${temperatureC} °C and ${sky}. (Invented demo data, not a real forecast.)`;
    expect(await lastAnswer(page)).toBe(expected);
    // Streamed: the page showed the answer at several lengths, each longer than the last.
    const lengths = (await answerLengths(page)).filter((length) => length > 0);
    expect(lengths.length).toBeGreaterThanOrEqual(3);
    expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
    expect(lengths.at(-1)).toBe(expected.length);
    await screenshot('01-weather');
  });

  it('changes the page after the user approves set_theme in the dialog with Enter', async () => {
    const green = rgb(THEME_SHADES.green.light);
    expect(await sendButtonColour()).not.toBe(green);
    const before = await finishedRuns(page);

    await send(page, 'Make the page green');
    const dialog = page.locator('#approval-dialog[open]');
    await dialog.waitFor({ timeout: WAIT_MS });
    expect(await dialog.locator('#approval-tool').textContent()).toBe('set_theme');
    expect(await dialog.locator('#approval-arguments').textContent()).toBe('{"color":"green"}');
    // Focus moved into the dialog, onto Approve.
    await eventually(() => page.evaluate(() => document.activeElement?.id)).toBe(
      'approval-approve',
    );
    await eventually(() => attribute(lastCard('set_theme'), 'data-state')).toBe('approval');
    await screenshot('02-approval-dialog');
    await page.keyboard.press('Enter');
    await waitForRunEnd(page, before);

    expect(await dialog.count()).toBe(0);
    expect(await attribute(page.locator('html'), 'data-theme')).toBe('green');
    expect(await sendButtonColour()).toBe(green);
    expect(await attribute(lastCard('set_theme'), 'data-state')).toBe('ok');
    expect(await lastAnswer(page)).toBe("Done: the page's accent is green now.");
    await screenshot('03-theme-green');
  });

  it('stops a long answer mid-stream: the run ends aborted and the text stops growing', async () => {
    const before = await finishedRuns(page);
    await send(page, 'Tell me a long story');
    const bubble = page.locator('#log .turn.assistant').last().locator('.bubble');
    await eventually(async () =>
      (await bubble.count()) > 0 ? await bubble.textContent() : '',
    ).toMatch(/^.{80}/s);
    // The footer under streaming text says so, not that it still waits for the model.
    expect(await page.locator('#log .run-footer').last().textContent()).toBe(
      'Step 1: the model is writing…',
    );

    await page.locator('#stop').click();
    await waitForRunEnd(page, before);

    const footer = page.locator('#log .run-footer[data-reason]').last();
    expect(await attribute(footer, 'data-reason')).toBe('aborted');
    // Stopped mid-stream: the step it was in did not complete.
    expect(await footer.textContent()).toMatch(/^Stopped during step 1 · 0 steps completed · /);
    expect(await attribute(page.locator('#timeline .timeline-run').first(), 'data-reason')).toBe(
      'aborted',
    );
    const stoppedAt = (await bubble.textContent()) ?? '';
    expect(stoppedAt.length).toBeGreaterThan(80);
    expect(stoppedAt.length).toBeLessThan(LONG_ANSWER.length);
    // Nothing can be waited for here: the check is that nothing more arrives, so watch a while.
    await page.waitForTimeout(400);
    expect(await bubble.textContent()).toBe(stoppedAt);
    await screenshot('04-stopped');
  });

  it('shows "remember that my favourite colour is green" in the memory panel', async () => {
    expect(await ask(page, 'Remember that my favourite colour is green')).toBe('stop');

    expect(await attribute(lastCard('save_memory'), 'data-state')).toBe('ok');
    const content = page.locator(
      '#memory-list .memory[data-key="favourite-colour"] .memory-content',
    );
    await eventually(async () =>
      (await content.count()) > 0 ? await content.inputValue() : '',
    ).toBe("The user's favourite colour is green");
    await screenshot('05-memory');
  });

  it('still has the conversation, its messages and the memory after a reload', async () => {
    await openPage();

    const log = page.locator('#log');
    expect(await texts(log.locator('.turn.user .bubble'))).toEqual([
      'What is the weather in Paris and Oslo?',
      'What is the weather in Paris?',
      'Make the page green',
      'Tell me a long story',
      'Remember that my favourite colour is green',
    ]);
    expect(await attribute(log.locator('.tool-card[data-tool="get_weather"]'), 'data-state')).toBe(
      'ok',
    );
    expect(await log.textContent()).toContain("Done: the page's accent is green now.");
    // The stopped answer is kept, and marked as interrupted.
    expect(await log.locator('.bubble[data-status="interrupted"]').count()).toBe(1);
    expect(await texts(page.locator('#conversation-list .conversation-title'))).toEqual([
      'What is the weather in Paris and Oslo?',
    ]);
    const memory = page.locator(
      '#memory-list .memory[data-key="favourite-colour"] .memory-content',
    );
    await eventually(async () =>
      (await memory.count()) > 0 ? await memory.inputValue() : '',
    ).toBe("The user's favourite colour is green");
    expect(await attribute(page.locator('html'), 'data-theme')).toBe('green');
    await screenshot('06-after-reload');
  });

  it('finds the conversation by what was said in the sidebar search, and none for words never said', async () => {
    const search = page.locator('#conversation-search');
    const titles = () => texts(page.locator('#conversation-list .conversation-title'));
    await search.fill('favourite colou');
    await eventually(titles).toEqual(['What is the weather in Paris and Oslo?']);
    expect(await page.locator('#conversation-list .conversation-snippet').textContent()).toMatch(
      /favourite.colour/i,
    );
    await search.fill('zanzibar');
    await eventually(() => texts(page.locator('#conversation-list .panel-empty'))).toEqual([
      'No conversation says that.',
    ]);
    await search.fill('');
    await eventually(titles).toEqual(['What is the weather in Paris and Oslo?']);
    expect(await page.locator('#conversation-list .conversation-snippet').count()).toBe(0);
  });

  it('offers a run left waiting for approval after a reload, and Escape rejects it on resume', async () => {
    await send(page, 'Make the page purple');
    await page.locator('#approval-dialog[open]').waitFor({ timeout: WAIT_MS });
    await openPage();

    const offer = page.locator('#resume-offers .resume-offer');
    await eventually(async () =>
      (await offer.count()) > 0 ? await offer.textContent() : '',
    ).toContain('set_theme({"color":"purple"})');
    await screenshot('07-resume-offer');
    const before = await finishedRuns(page);
    await offer.getByRole('button', { name: 'Resume' }).click();
    await page.locator('#approval-dialog[open]').waitFor({ timeout: WAIT_MS });
    await page.keyboard.press('Escape');
    await waitForRunEnd(page, before);

    expect(await attribute(lastCard('set_theme'), 'data-state')).toBe('rejected');
    expect(await lastAnswer(page)).toBe(
      'I did not run set_theme: you declined ("The user pressed Escape.").',
    );
    expect(await attribute(page.locator('html'), 'data-theme')).toBe('green');
    await screenshot('08-rejected-on-resume');
  });

  it('adds a text in the knowledge panel and answers a question about it, naming it as the source', async () => {
    await page.locator('#knowledge-title').fill('Lighthouse notes');
    await page
      .locator('#knowledge-text')
      .fill(
        'The Glimmerfen lighthouse is kept by Orla Vance. She lights the lamp at dusk and logs every passing ship.',
      );
    await page.locator('#knowledge-form button[type="submit"]').click();
    await expect
      .poll(() => texts(page.locator('#knowledge-list .document-title')), { timeout: WAIT_MS })
      .toEqual(['Lighthouse notes']);
    // The list may show the document a moment before the status line says so.
    await expect
      .poll(() => page.locator('#knowledge-status').textContent(), { timeout: WAIT_MS })
      .toContain('Added');

    expect(await ask(page, 'Who keeps the Glimmerfen lighthouse?')).toBe('stop');

    expect(await lastAnswer(page)).toContain('Orla Vance');
    expect(await page.locator('#log .sources').last().textContent()).toMatch(
      /^Sources: Lighthouse notes \(passage 1, /,
    );
    await screenshot('09-knowledge');

    // A question the document does not answer is not answered from it: stop words no
    // longer make "What is the capital of France?" score above the cut-off.
    expect(await ask(page, 'What is the capital of France?')).toBe('stop');
    expect(await page.locator('#log .turn.assistant').last().locator('.sources').count()).toBe(0);
    expect(await lastAnswer(page)).not.toContain('Orla Vance');
  });

  it('runs the headline tool in the iframe sandbox, where the app and its storage are out of reach', async () => {
    expect(await ask(page, 'Get a headline about space')).toBe('stop');

    const card = lastCard('fetch_headline');
    expect(await attribute(card, 'data-state')).toBe('ok');
    expect(await card.locator('.tool-tier').textContent()).toBe('iframe sandbox');
    const result = JSON.parse((await card.locator('.tool-result').textContent()) ?? '{}');
    expect(result.sandbox).toEqual({
      origin: 'null',
      indexedDB: expect.stringMatching(/^blocked \(/),
      appServer: 'unreachable (connect-src blocks it)',
    });
    expect(await lastAnswer(page)).toMatch(/^Headline: ".*space.*" \(invented\)\./);
    await screenshot('10-headline');
  });

  it("runs the model's script in QuickJS in an iframe sandbox, its weather lookups made through the agent", async () => {
    expect(await ask(page, 'Which is warmest: Paris, Oslo or Bergen?')).toBe('stop');

    const card = lastCard('run_js');
    expect(await attribute(card, 'data-state')).toBe('ok');
    expect(await card.locator('.tool-tier').textContent()).toBe('QuickJS in an iframe sandbox');
    const [warmest] = ['Paris', 'Oslo', 'Bergen'].sort(
      (a, b) => fakeWeather(b).temperatureC - fakeWeather(a).temperatureC,
    );
    expect(await lastAnswer(page)).toContain(`${warmest} is the warmest`);
  });

  it("lists the shared notes of the demo server's MCP server, read-only so without approval, on a card of the MCP tier", async () => {
    expect(await ask(page, 'List the shared notes')).toBe('stop');

    const card = lastCard('notes__list_notes');
    expect(await attribute(card, 'data-state')).toBe('ok');
    expect(await card.locator('.tool-tier').textContent()).toBe('MCP server');
    expect(await card.locator('.tool-result').textContent()).toContain('welcome');
    expect(await page.locator('#approval-dialog[open]').count()).toBe(0);
    await screenshot('10-mcp-notes');
  });

  // Not in WebKit: WebKitGTK's MiniBrowser under Xvfb drops frames whatever the page does.
  // Idle, the demo page got 107 frames in 4 s there, 15 gaps over 50 ms; during Airlock's
  // run 96 long frames, 13 s frozen of ~14 s. Its frame times cannot tell the page's own
  // work apart. Chromium and Firefox draw at 60 Hz when idle.
  it.skipIf(ENGINE === 'webkit')(
    'keeps the page drawing frames while Airlock runs the test conversation, which stutters it when run on the page thread',
    async () => {
      const panel = page.locator('#responsiveness');
      const output = page.locator('#comparison-output');
      /** Runs the test conversation with the loop in `place`; the meter's long frames during it. */
      const runIn = async (place: 'worker' | 'page') => {
        await page.locator(`#responsiveness input[value="${place}"]`).click();
        await page.locator('#comparison-run').click();
        await page.waitForFunction(
          (wanted) => {
            const meter = document.getElementById('responsiveness');
            return (
              meter?.dataset.mode === wanted && /^(done|error)$/.test(meter.dataset.state ?? '')
            );
          },
          place,
          { timeout: WAIT_MS },
        );
        expect(await attribute(panel, 'data-state')).toBe('done');
        expect(await output.textContent()).toContain(RESPONSIVENESS_SCENARIO.finalText);
        const figure = async (name: string) => Number(await attribute(panel, name));
        return {
          longFrames: await figure('data-long-frames'),
          stalledMs: await figure('data-stalled-ms'),
          longestMs: await figure('data-longest-frame'),
          // Chromium only: absent (NaN) where the browser reports no long tasks.
          longTasks: await figure('data-long-tasks'),
          longTaskMs: await figure('data-long-task-ms'),
        };
      };

      // A pair of runs, worker then page, up to three times: the checks below read the pair
      // that separates best. The machine's load falls on the worker's run too (its frames stall
      // when other processes take both cores: 2.7 s of 3 s seen at a load average near 9 while
      // two more browsers ran tests), and it changes from one run to the next; a page that does
      // the loop's work on its own thread stalls in every pair, so the checks still fail for it.
      type Figures = Awaited<ReturnType<typeof runIn>>;
      const separation = ({ inWorker, onPage }: { inWorker: Figures; onPage: Figures }) =>
        inWorker.stalledMs / Math.max(onPage.stalledMs, 1);
      /** The checks below, as one test of a pair: no more pairs are run once one passes. */
      const separated = ({ inWorker, onPage }: { inWorker: Figures; onPage: Figures }) =>
        inWorker.stalledMs < onPage.stalledMs / 2 &&
        inWorker.longestMs < onPage.longestMs &&
        (ENGINE !== 'chromium' || inWorker.longTaskMs < onPage.longTaskMs / 2);
      let best: { inWorker: Figures; onPage: Figures } | undefined;
      for (let pair = 1; pair <= 3; pair += 1) {
        const measured = { inWorker: await runIn('worker'), onPage: await runIn('page') };
        console.info(
          `[${ENGINE}] pair ${pair}: worker ${JSON.stringify(measured.inWorker)}, page ${JSON.stringify(measured.onPage)}`,
        );
        if (separated(measured)) {
          best = measured;
          break;
        }
        if (best === undefined || separation(measured) < separation(best)) best = measured;
      }
      const { inWorker, onPage } = best as { inWorker: Figures; onPage: Figures };
      // The page loop counts the context on the page before each of its 5 model calls, each
      // count a long task (~200-1000 ms on a loaded 2-core machine): long frames, seconds
      // frozen in all. With Airlock the page only draws the text. How many frames a page
      // drops besides depends on the machine: with its load average at 7-13 on 2 cores,
      // Airlock's runs dropped 1 to 13 short ones (the worker's count takes a core too),
      // frozen 33-350 ms in all, against 2.1-3.3 s for the page loop. So the check is the
      // time frozen, with a wide margin, and the longest frame, not a count of frames.
      expect(onPage.longFrames).toBeGreaterThanOrEqual(1);
      expect(inWorker.stalledMs).toBeLessThan(onPage.stalledMs / 2);
      expect(inWorker.longestMs).toBeLessThan(onPage.longestMs);
      // What the page thread itself did, whatever else the machine ran: Chromium reports its
      // long tasks. With the loop on the page, one per context count, each 200 ms or more.
      // With Airlock, on a quiet machine none; a task of a few ms is timed by the wall clock
      // though, so on a loaded one a short task now and then lasts past 50 ms (CI saw one).
      // So the check is the time in long tasks, with a wide margin, not a count of zero.
      if (ENGINE === 'chromium') {
        expect(onPage.longTasks).toBeGreaterThanOrEqual(1);
        // Not a comparison of counts: at a load average near 10, preempted short tasks made
        // 15 long ones with Airlock against the page loop's 8 long (and far longer) ones.
        expect(inWorker.longTaskMs).toBeLessThan(onPage.longTaskMs / 2);
      }
      expect(await texts(page.locator('#comparison-result [data-place]'))).toEqual([
        expect.stringMatching(/^In a worker \(Airlock\): \d+ long frames? \(> 50 ms\), frozen /),
        expect.stringMatching(/^On the page thread: \d+ long frames? \(> 50 ms\), frozen /),
      ]);
      await screenshot('11-responsiveness');
      await docsImage('responsiveness');
    },
    180_000,
  );

  it('collapses a 50,000-character message, shows the timeline of the open conversation only, and Show all opens the message', async () => {
    const first = await attribute(
      page.locator('#conversation-list .conversation[aria-current="true"]'),
      'data-id',
    );
    const firstRuns = await texts(
      page.locator('#timeline .timeline-run:not([hidden]) .timeline-title'),
    );
    expect(firstRuns.length).toBeGreaterThan(0);
    await page.locator('#new-conversation').click();
    // The new conversation is open once its log is empty (it is cleared after a store read).
    await eventually(() => page.locator('#log .turn').count()).toBe(0);
    expect(await page.locator('#timeline .timeline-run:not([hidden])').count()).toBe(0);

    // 50,000 characters, ending in one that the composer's trim keeps.
    const long = `${'All work and no play makes a dull message. '.repeat(1200).slice(0, 49_992)}The end.`;
    const before = await finishedRuns(page);
    await send(page, long);
    await waitForRunEnd(page, before);

    const bubble = page.locator('#log .turn.user').last().locator('.bubble');
    expect(await attribute(bubble, 'data-collapsed')).toBe('true');
    expect((await bubble.textContent())?.length).toBe(50_000);
    const collapsedHeight = await bubble.evaluate((element) => element.offsetHeight);
    expect(collapsedHeight).toBeLessThan(300);
    const showAll = page.locator('#log .turn.user').last().locator('.show-all');
    expect(await showAll.textContent()).toBe('Show all (50,000 characters)');
    // This conversation's one run, and none of the other's.
    const shown = page.locator('#timeline .timeline-run:not([hidden]) .timeline-title');
    expect(await texts(shown)).toEqual([`“${long}”`]);
    await screenshot('11-long-message-collapsed');

    await showAll.click();
    expect(await attribute(bubble, 'data-collapsed')).toBe('false');
    expect(await bubble.evaluate((element) => element.offsetHeight)).toBeGreaterThan(
      collapsedHeight * 5,
    );

    // Back in the first conversation: its runs again, without the long message's.
    await page
      .locator(`#conversation-list .conversation[data-id="${first}"] .conversation-select`)
      .click();
    await eventually(() => texts(shown)).toEqual(firstRuns);
    // The sandbox workers' counts: one line for the panel, none per run.
    expect(await page.locator('#sandbox-stats').textContent()).toMatch(/^Sandbox workers — demo: /);
    expect(await page.locator('#timeline .timeline-stats').count()).toBe(0);
  });

  it('shows the run timeline without scrolling on a 1280×800 screen', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    try {
      await page.waitForTimeout(200);
      const place = await page
        .locator('#timeline .timeline-run:not([hidden]) .timeline-title')
        .first()
        .evaluate((title) => {
          const box = title.getBoundingClientRect();
          const x = box.left + Math.min(box.width / 2, 40);
          const y = box.top + box.height / 2;
          // What is drawn there: the title itself only if it is in view, not clipped or covered.
          const drawn = document.elementFromPoint(x, y);
          return {
            bottom: box.bottom,
            drawn: drawn === title || title.contains(drawn),
            scrolled: document.scrollingElement?.scrollTop ?? 0,
          };
        });
      expect(place.drawn).toBe(true);
      expect(place.bottom).toBeLessThanOrEqual(800);
      expect(place.scrolled).toBe(0);
      await screenshot('12-timeline-1280x800');
    } finally {
      await page.setViewportSize(VIEWPORT);
    }
  });

  it('shows the reasoning of an arithmetic question in a collapsed thinking block, kept after a reload', async () => {
    expect(await ask(page, 'What is (2+3)*4?')).toBe('stop');
    const thinking = () => page.locator('#log .turn.assistant').last().locator('details.thinking');
    expect(await thinking().count()).toBe(1);
    // Collapsed: the answer comes first, the thinking is a click away.
    expect(await attribute(thinking(), 'open')).toBeNull();
    const streamed = await thinking().locator('.thinking-text').textContent();
    expect(streamed).toMatch(/hand the expression to the calculate tool/);

    await openPage();
    expect(await thinking().locator('.thinking-text').textContent()).toBe(streamed);
  });

  it('sends an image chosen with the file input, and still shows it in the turn after a reload', async () => {
    // A File set on the input as a user's choice would set it (DataTransfer works in all three engines).
    await page.evaluate(() => {
      const png =
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
      const bytes = Uint8Array.from(atob(png), (char) => char.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], 'dot.png', { type: 'image/png' }));
      const input = document.querySelector<HTMLInputElement>('#attach');
      if (input) input.files = transfer.files;
    });
    expect(await ask(page, 'What is in this picture?')).toBe('stop');
    // The offline model answers from the request it received: the image arrived as a data URL.
    expect(await lastAnswer(page)).toContain('I received 1 attachment (image/png)');
    expect(await texts(page.locator('#log .turn.user .attachment'))).toContain(
      '📎 dot.png (image/png, 70 bytes)',
    );
    await screenshot('13-image-sent');

    await openPage();
    // Stored by reference: the reloaded turn names the stored image.
    await eventually(() => texts(page.locator('#log .turn.user .attachment'))).toContain(
      '📎 image (image/png, 70 bytes)',
    );
  });

  it('proposes what it learnt from "my name is …" in the memory panel, still after a reload, and keeps it when the user says so', async () => {
    expect(await ask(page, 'Hello, my name is Ada.')).toBe('stop');

    const proposal = page.locator('#memory-learned .learned[data-key="user.name"]');
    await eventually(() => attribute(proposal, 'data-status')).toBe('proposed');
    expect(await proposal.locator('.learned-text').textContent()).toBe(
      'Remember user.name: The user is called Ada.?',
    );
    expect(await page.locator('#memory-list .memory[data-key="user.name"]').count()).toBe(0);
    expect(await texts(page.locator('.timeline-run:not([hidden]) .timeline-learned'))).toContain(
      'learned user.name · proposed',
    );
    // Stored: the proposal is still offered after a reload.
    await openPage();
    await eventually(() => attribute(proposal, 'data-status')).toBe('proposed');
    await proposal.getByRole('button', { name: 'Remember “user.name”' }).click();

    const content = page.locator('#memory-list .memory[data-key="user.name"] .memory-content');
    await eventually(async () =>
      (await content.count()) > 0 ? await content.inputValue() : '',
    ).toBe('The user is called Ada.');
    expect(await proposal.count()).toBe(0);
  });

  it('raised no uncaught error in the page', async () => {
    expect(await demo.browser.pageErrors()).toEqual([]);
  });
});

describe('the demo in front of a model that refuses the key and has no /embeddings', () => {
  let upstream: ModelServer | undefined;
  let proxied: DemoServer | undefined;
  let upstreamURL = '';

  beforeAll(async () => {
    upstream = await startModelServer();
    // What OpenAI answers a wrong key, and a server without embeddings answers /embeddings.
    const session = upstream.createSession(
      () => ({ status: 401, message: 'Incorrect API key provided: sk-plac*******lder' }),
      { rejectEmbeddings: true },
    );
    upstreamURL = session.baseURL;
    proxied = await startDemoServer({
      root: demo.outDir,
      port: 0,
      env: { OPENAI_API_KEY: 'sk-placeholder', OPENAI_BASE_URL: session.baseURL },
    });
    await openPage(proxied);
  });

  afterAll(async () => {
    await proxied?.close();
    await upstream?.close();
  });

  it('says under a refused key that it belongs on the server, through the proxy and directly', async () => {
    expect(await page.locator('#model-badge').textContent()).toBe('Model: gpt-4o-mini at /llm/v1');
    expect(await ask(page, 'Hello')).toBe('error');
    // The proxy's 502 upstream_auth_failed is a refused key to the page, as docs/errors.md says.
    expect(
      await page.locator('#log .turn.assistant').last().locator('.run-error code').textContent(),
    ).toBe('model-auth');
    const hint = page.locator('#log .turn.assistant').last().locator('.error-hint');
    expect(await hint.textContent()).toContain('OPENAI_API_KEY=sk-… npm run demo');
    expect(await hint.textContent()).toContain('never in this page');
    await screenshot('13-key-refused-by-upstream');

    // The same hint when the page talks to the model without the proxy.
    await page.locator('.settings summary').click();
    // The settings say so too, where a key field would be looked for.
    expect(await page.locator('.settings').textContent()).toMatch(
      /API key goes to the server, never into this page: start it with\s+OPENAI_API_KEY=sk-… npm run demo/,
    );
    await page.locator('#base-url').fill(upstreamURL);
    await page.locator('#settings-form button[type="submit"]').click();
    expect(await ask(page, 'Hello again')).toBe('error');
    expect(
      await page.locator('#log .turn.assistant').last().locator('.run-error code').textContent(),
    ).toBe('model-auth');
    expect(
      await page.locator('#log .turn.assistant').last().locator('.error-hint').textContent(),
    ).toContain('OPENAI_API_KEY=sk-… npm run demo');
    // Neither the server's key nor the upstream's masked quote of it reaches the page.
    expect(await page.locator('body').textContent()).not.toMatch(/sk-plac/);
  });

  it('says why a document was not added to an endpoint without /embeddings, and keeps it in the form', async () => {
    await page.locator('#knowledge-title').fill('Holiday policy');
    await page
      .locator('#knowledge-text')
      .fill('Every employee gets 25 days of paid holiday a year.');
    await page.locator('#knowledge-form button[type="submit"]').click();

    const status = page.locator('#knowledge-status');
    await eventually(() => attribute(status, 'data-error')).toBe('true');
    expect(await status.textContent()).toMatch(/^“Holiday policy” was not added: .*404/);
    expect(await status.locator('.error-hint').textContent()).toMatch(/has none\. Use \/llm\/v1 /);
    expect(await page.locator('#knowledge-list .document').count()).toBe(0);
    expect(await page.locator('#knowledge-title').inputValue()).toBe('Holiday policy');
    await screenshot('14-no-embeddings');
  });
});
