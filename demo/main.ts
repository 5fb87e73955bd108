/**
 * The demo page's entry: wires the composer, the Stop button and the model settings to
 * an Airlock agent, and renders each run's events into the conversation log.
 */
import type { Agent } from 'airlock';
import {
  createDemoAgent,
  DEFAULT_SETTINGS,
  type ModelSettings,
  usesOfflineModel,
} from './demo-agent';
import { createElement, requireElement } from './dom';
import { createRunView } from './run-view';

const log = requireElement('log', HTMLOListElement);
const composer = requireElement('composer', HTMLFormElement);
const prompt = requireElement('prompt', HTMLInputElement);
const sendButton = requireElement('send', HTMLButtonElement);
const stopButton = requireElement('stop', HTMLButtonElement);
const settingsForm = requireElement('settings-form', HTMLFormElement);
const baseURLInput = requireElement('base-url', HTMLInputElement);
const modelInput = requireElement('model-name', HTMLInputElement);
const modelBadge = requireElement('model-badge', HTMLParagraphElement);

let settings: ModelSettings = DEFAULT_SETTINGS;
let agent: Agent | undefined;
/** Set while a run is going on; Stop aborts it. */
let activeRun: AbortController | undefined;

baseURLInput.value = settings.baseURL;
modelInput.value = settings.model;
applySettings(settings);
note(
  'Ask a question below. Tool calls appear as cards, and the answer streams in as it is written.',
);

composer.addEventListener('submit', (event) => {
  event.preventDefault();
  const input = prompt.value.trim();
  // One run at a time: the agent keeps one conversation.
  if (input === '' || activeRun) return;
  prompt.value = '';
  void runTurn(input);
});

stopButton.addEventListener('click', () => activeRun?.abort());

settingsForm.addEventListener('submit', (event) => {
  event.preventDefault();
  activeRun?.abort();
  applySettings({ baseURL: baseURLInput.value.trim(), model: modelInput.value.trim() });
  note(
    `New agent for model "${settings.model}" at ${settings.baseURL}; the conversation starts over.`,
  );
});

for (const suggestion of document.querySelectorAll<HTMLButtonElement>('.suggestion')) {
  suggestion.addEventListener('click', () => {
    prompt.value = suggestion.textContent ?? '';
    composer.requestSubmit();
  });
}

async function runTurn(input: string): Promise<void> {
  log.append(
    createElement(
      'li',
      { className: 'turn user' },
      createElement('span', { className: 'speaker', text: 'You' }),
      createElement('p', { className: 'bubble', text: input }),
    ),
  );
  const view = createRunView(log);
  scrollToEnd();
  if (!agent) {
    view.showError({ code: 'invalid-options', message: 'No agent: fix the model settings first.' });
    return;
  }
  const controller = new AbortController();
  activeRun = controller;
  setRunning(true);
  try {
    for await (const event of agent.run(input, { signal: controller.signal })) {
      view.handle(event);
      scrollToEnd();
    }
  } catch (error) {
    // Runs report their failures as events; reaching this is a bug worth seeing on the page.
    const message = error instanceof Error ? error.message : String(error);
    view.showError({ code: 'internal-error', message });
  } finally {
    activeRun = undefined;
    setRunning(false);
    prompt.focus();
  }
}

/** Replaces the agent: the old one is disposed, which also ends its worker. */
function applySettings(next: ModelSettings): void {
  settings = next;
  agent?.dispose();
  agent = undefined;
  modelBadge.textContent = usesOfflineModel(settings)
    ? 'Offline demo model'
    : `Model: ${settings.model} at ${settings.baseURL}`;
  modelBadge.dataset.offline = String(usesOfflineModel(settings));
  try {
    agent = createDemoAgent(settings);
  } catch (error) {
    note(
      `The agent could not be created: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function setRunning(running: boolean): void {
  sendButton.disabled = running;
  stopButton.disabled = !running;
}

function note(text: string): void {
  log.append(createElement('li', { className: 'note', text }));
  scrollToEnd();
}

function scrollToEnd(): void {
  log.lastElementChild?.scrollIntoView({ block: 'end' });
}
