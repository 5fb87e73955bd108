/**
 * The responsiveness panel: the frame meter, a switch for where the agent loop runs, and
 * a button that plays the same scripted conversation through that loop (see
 * `demo/responsiveness/agent-loops.ts`), counting the page's long frames while it runs.
 */
import type { Contestant } from '../../bench/peers/contestant';
import type { LoopPlace } from '../responsiveness/agent-loops';
import { RESPONSIVENESS_INPUT, RESPONSIVENESS_SCENARIO } from '../shared/responsiveness-test';
import { createElement, formatDuration, requireElement } from './dom';
import { startFrameMeter } from './frame-meter';

/** What the panel needs from the page. */
export interface ResponsivenessPanelOptions {
  /** The offline model's base URL, absolute; undefined when another model answers. */
  readonly baseURL: string | undefined;
}

const PLACE_NAMES: Readonly<Record<LoopPlace, string>> = {
  worker: 'In a worker (Airlock)',
  page: 'On the page thread',
};

/** Wires the panel in index.html (`#responsiveness`); it runs for the page's lifetime. */
export function createResponsivenessPanel({ baseURL }: ResponsivenessPanelOptions): void {
  const root = requireElement('responsiveness', HTMLElement);
  const runButton = requireElement('comparison-run', HTMLButtonElement);
  const output = requireElement('comparison-output', HTMLElement);
  const result = requireElement('comparison-result', HTMLElement);
  const places = [...root.querySelectorAll<HTMLInputElement>('input[name="loop-place"]')];
  const meter = startFrameMeter({
    root,
    graph: requireElement('frame-graph', HTMLCanvasElement),
    track: requireElement('frame-track', HTMLElement),
    marker: requireElement('frame-marker', HTMLElement),
    frameTime: requireElement('frame-time', HTMLElement),
  });
  /** Each loop is set up once (its worker, client or database) and reused, as an app would. */
  const loops = new Map<LoopPlace, Promise<Contestant>>();
  /** The latest outcome of each place, shown side by side. */
  const outcomes = new Map<LoopPlace, string>();
  const showOutcome = (place: LoopPlace, text: string) => {
    outcomes.set(place, `${PLACE_NAMES[place]}: ${text}`);
    result.replaceChildren(
      ...(['worker', 'page'] as const).flatMap((each) => {
        const line = outcomes.get(each);
        return line === undefined
          ? []
          : [createElement('span', { text: line, attributes: { 'data-place': each } })];
      }),
    );
  };

  if (baseURL === undefined) {
    runButton.disabled = true;
    result.textContent =
      'The test conversation is scripted in the offline model, which is not the one answering here.';
    return;
  }
  const modelURL = baseURL;

  const selectedPlace = (): LoopPlace =>
    places.find((input) => input.checked)?.value === 'page' ? 'page' : 'worker';

  const setBusy = (busy: boolean) => {
    runButton.disabled = busy;
    for (const input of places) input.disabled = busy;
  };

  const prepare = (place: LoopPlace): Promise<Contestant> => {
    let loop = loops.get(place);
    if (!loop) {
      loop = import('../responsiveness/agent-loops').then((module) =>
        place === 'page' ? module.preparePageLoop(modelURL) : module.prepareWorkerLoop(modelURL),
      );
      // A failed set-up is tried again next time.
      loop.catch(() => loops.delete(place));
      loops.set(place, loop);
    }
    return loop;
  };

  runButton.addEventListener('click', async () => {
    const place = selectedPlace();
    setBusy(true);
    root.dataset.mode = place;
    root.dataset.state = 'preparing';
    showOutcome(place, 'starting the loop…');
    output.replaceChildren();
    try {
      const loop = await prepare(place);
      root.dataset.state = 'running';
      showOutcome(place, 'running…');
      meter.begin();
      let outcome: Awaited<ReturnType<Contestant['run']>>;
      try {
        outcome = await loop.run(RESPONSIVENESS_INPUT, {
          onText: (delta) => {
            output.append(delta);
            output.scrollTop = output.scrollHeight;
          },
        });
      } finally {
        const span = meter.end();
        showOutcome(
          place,
          `${span.longFrames} long frame${span.longFrames === 1 ? '' : 's'} (> 50 ms), frozen ${formatDuration(span.stalledMs)} in all, the longest ${formatDuration(span.longestFrameMs)}${span.longTasks === undefined ? '' : `; ${span.longTasks} long task${span.longTasks === 1 ? '' : 's'} on the page thread`}.`,
        );
      }
      if (outcome.finalText !== RESPONSIVENESS_SCENARIO.finalText) {
        throw new Error('The run ended with another answer than the script’s.');
      }
      root.dataset.state = 'done';
    } catch (error) {
      root.dataset.state = 'error';
      showOutcome(place, error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  });
}
