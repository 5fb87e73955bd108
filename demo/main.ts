/**
 * The demo page's entry: wires the conversation list, the chat, the memory panel, the
 * run timeline and the model settings to an Airlock agent.
 */
import type { Agent, AgentRun, RunInputPart, RunRecord, StoreChange } from 'airlock-agents';
import {
  createDemoAgent,
  defaultSettings,
  type ModelSettings,
  usesOfflineModel,
} from './demo-agent';
import { OFFLINE_MODEL_PATH } from './shared/offline-model-path';
import { createApprovalDialog } from './views/approval-dialog';
import { createConversationList } from './views/conversation-list';
import { createElement, requireElement } from './views/dom';
import { createFlowPanel } from './views/flow-panel';
import { type RefusedTurnActions, renderHistory } from './views/history-view';
import { createKnowledgePanel } from './views/knowledge-panel';
import { createLearnedMemories } from './views/learned-memories';
import { createMemoryPanel } from './views/memory-panel';
import { createOnDevicePanel } from './views/ondevice-panel';
import { playRun } from './views/play-run';
import { createResponsivenessPanel } from './views/responsiveness-panel';
import { showResumeOffers } from './views/resume-offers';
import { createRunTimeline } from './views/run-timeline';
import { createRunView } from './views/run-view';
import { readSelectedConversation, saveSelectedConversation } from './views/selected-conversation';
import { restoreTheme } from './views/theme';
import { createUserTurn } from './views/turns';

restoreTheme();

const log = requireElement('log', HTMLOListElement);
const composer = requireElement('composer', HTMLFormElement);
const prompt = requireElement('prompt', HTMLInputElement);
const attachInput = requireElement('attach', HTMLInputElement);
const sendButton = requireElement('send', HTMLButtonElement);
const stopButton = requireElement('stop', HTMLButtonElement);
const settingsForm = requireElement('settings-form', HTMLFormElement);
const baseURLInput = requireElement('base-url', HTMLInputElement);
const modelInput = requireElement('model-name', HTMLInputElement);
const modelBadge = requireElement('model-badge', HTMLParagraphElement);
const resumeOffers = requireElement('resume-offers', HTMLDivElement);
const agentStatus = requireElement('agent-status', HTMLParagraphElement);
const agentStatusText = requireElement('agent-status-text', HTMLSpanElement);
const suggestions = [...document.querySelectorAll<HTMLButtonElement>('.suggestion')];

let settings: ModelSettings = defaultSettings();
let agent = createDemoAgent(settings);
let unsubscribe = follow(agent);
/** The open conversation; runs continue it. */
let selectedId = '';
/** The newest message `seq` shown, so a change notice redraws only when there is more. */
let renderedSeq = 0;
/** Set while a run is going on; Stop aborts it. */
let activeRun: AbortController | undefined;

const approvals = createApprovalDialog();
const timeline = createRunTimeline(
  {
    list: requireElement('timeline', HTMLOListElement),
    stats: requireElement('sandbox-stats', HTMLParagraphElement),
  },
  () => (agent.disposed ? {} : agent.sandboxStats()),
);
const conversations = createConversationList({
  list: requireElement('conversation-list', HTMLUListElement),
  newButton: requireElement('new-conversation', HTMLButtonElement),
  searchInput: requireElement('conversation-search', HTMLInputElement),
  memory: () => agent.memory,
  onSelect: (id) => void openConversation(id ?? crypto.randomUUID()),
  onError: showFailure,
});
const memories = createMemoryPanel({
  list: requireElement('memory-list', HTMLUListElement),
  form: requireElement('memory-form', HTMLFormElement),
  keyInput: requireElement('memory-key', HTMLInputElement),
  contentInput: requireElement('memory-content', HTMLInputElement),
  memory: () => agent.memory,
});
const learned = createLearnedMemories(
  requireElement('memory-learned', HTMLUListElement),
  () => agent.memory,
  () => void memories.refresh(),
);
const knowledgePanel = createKnowledgePanel({
  list: requireElement('knowledge-list', HTMLUListElement),
  form: requireElement('knowledge-form', HTMLFormElement),
  titleInput: requireElement('knowledge-title', HTMLInputElement),
  textInput: requireElement('knowledge-text', HTMLTextAreaElement),
  fileInput: requireElement('knowledge-file', HTMLInputElement),
  status: requireElement('knowledge-status', HTMLElement),
  knowledge: () => agent.knowledge,
});

composer.addEventListener('submit', (event) => {
  event.preventDefault();
  const input = prompt.value.trim();
  // One run at a time: the log shows one conversation.
  if (input === '' || activeRun) return;
  const files = [...(attachInput.files ?? [])];
  prompt.value = '';
  attachInput.value = '';
  void runTurn(input, files);
});

stopButton.addEventListener('click', () => activeRun?.abort());

settingsForm.addEventListener('submit', (event) => {
  event.preventDefault();
  activeRun?.abort();
  applySettings({ baseURL: baseURLInput.value.trim(), model: modelInput.value.trim() });
  note(`New agent for model "${settings.model}" at ${settings.baseURL}.`);
  void refreshAll();
});

for (const suggestion of suggestions) {
  suggestion.addEventListener('click', () => {
    prompt.value = suggestion.textContent ?? '';
    composer.requestSubmit();
  });
}

baseURLInput.value = settings.baseURL;
modelInput.value = settings.model;
showModel();
createResponsivenessPanel({
  baseURL: usesOfflineModel(settings) ? new URL(OFFLINE_MODEL_PATH, location.href).href : undefined,
});
createFlowPanel(settings);
createOnDevicePanel();
/**
 * Settles once start-up has opened a conversation. Until then the composer is disabled
 * (index.html starts it so): a run needs the open conversation's id, and opening one
 * clears the log, so a message sent earlier would be lost.
 */
const started = start();

/** Opens the conversation of the last visit (or the newest), then the panels; then enables sending. */
async function start(): Promise<void> {
  try {
    await conversations.refresh();
    const remembered = readSelectedConversation();
    // The list shows its first page: an older conversation remembered is looked up.
    const isStored = async (id: string) =>
      conversations.conversations.some((conversation) => conversation.id === id) ||
      (await agent.memory.getConversation(id)) !== undefined;
    const initial =
      remembered !== undefined && (await isStored(remembered))
        ? remembered
        : (conversations.conversations[0]?.id ?? crypto.randomUUID());
    await openConversation(initial);
    await refreshAll();
    agentStatus.dataset.state = 'ready';
    agentStatusText.textContent = 'The agent is ready.';
  } catch (error) {
    // Sending stays possible: each run then reports what is wrong, as after bad settings.
    agentStatus.dataset.state = 'failed';
    agentStatusText.textContent = `The agent did not start: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    for (const control of [prompt, attachInput, sendButton, ...suggestions])
      control.disabled = false;
    document.body.dataset.ready = 'true';
    // Where the visitor was headed, unless they have gone on to another control meanwhile.
    if (document.activeElement === document.body) prompt.focus();
  }
}

async function refreshAll(): Promise<void> {
  await Promise.all([
    conversations.refresh(),
    memories.refresh(),
    knowledgePanel.refresh(),
    learned.refresh(),
    offerResumes(),
  ]);
}

/** Shows the stored messages of conversation `id` (none yet for a new one). */
async function openConversation(id: string): Promise<void> {
  selectedId = id;
  saveSelectedConversation(id);
  conversations.setSelected(id);
  timeline.show(id);
  const detail = await agent.memory.getConversation(id).catch((error: unknown) => {
    showFailure(error);
    return undefined;
  });
  if (selectedId !== id) return;
  log.replaceChildren();
  if (detail && detail.messages.length > 0) renderHistory(log, detail.messages, refusedActions);
  else
    note(
      'Ask something below. Tool calls appear as cards, and the answer streams in as it is written.',
    );
  renderedSeq = detail?.conversation.lastSeq ?? 0;
  scrollToEnd();
}

async function runTurn(input: string, files: readonly File[] = []): Promise<void> {
  // The composer is disabled until start-up ends; a send that comes earlier anyway waits.
  await started;
  log.append(
    createUserTurn(
      input,
      files.map((file) => `📎 ${file.name} (${file.type || 'unknown type'}, ${file.size} bytes)`),
    ),
  );
  // Files go as they are: the agent worker stores each once (by its SHA-256) and sends it as a data URL.
  const parts: RunInputPart[] = [
    { type: 'text', text: input },
    ...files.map(
      (file): RunInputPart =>
        file.type.startsWith('image/')
          ? { type: 'image', image: file }
          : { type: 'file', data: file, filename: file.name },
    ),
  ];
  await play(`“${input}”`, (signal) =>
    agent.run(files.length > 0 ? parts : input, { conversationId: selectedId, signal }),
  );
}

/** Retry and Remove of a refused turn: a new run with its input, or its removal. */
const refusedActions: RefusedTurnActions = {
  retry(runId) {
    if (activeRun) {
      note('Stop the current run before retrying a message.');
      return;
    }
    const conversationId = selectedId;
    void play('Retry of a refused message', (signal) =>
      agent.retryRefused(conversationId, runId, { signal }),
    ).then(() => openConversation(conversationId));
  },
  remove(runId) {
    const conversationId = selectedId;
    agent.memory
      .dropRefused(conversationId, runId)
      .then(() => openConversation(conversationId))
      .catch(showFailure);
  },
};

async function resumeRun(run: RunRecord): Promise<void> {
  if (activeRun) {
    note('Stop the current run before resuming another.');
    return;
  }
  await openConversation(run.conversationId);
  await play(`Resumed: “${run.input}”`, (signal) => agent.resume(run.id, { signal }));
}

/** Starts a run with `start` and shows it in the log and the timeline until it ends. */
async function play(title: string, start: (signal: AbortSignal) => AgentRun): Promise<void> {
  const view = createRunView(log);
  const entry = timeline.begin(title, selectedId);
  scrollToEnd();
  const controller = new AbortController();
  // A run refused on the page (an attachment over `limits.maxAttachmentBytes`, say) ends
  // with a run-error event, shown like any other.
  const run = start(controller.signal);
  activeRun = controller;
  setRunning(true);
  const conversationId = selectedId;
  try {
    await playRun(run, {
      view,
      timeline: entry,
      approvals,
      afterEvent: scrollToEnd,
      learned: learned.show,
    });
    // What the run stored is on the page already: a change notice must not redraw it.
    const detail = await agent.memory.getConversation(conversationId).catch(() => undefined);
    if (detail && conversationId === selectedId) renderedSeq = detail.conversation.lastSeq;
    // A refused turn is drawn again from the store, with its Retry and Remove buttons.
    if (detail?.messages.some((row) => row.status === 'refused' && row.runId === run.runId))
      await openConversation(conversationId);
  } finally {
    activeRun = undefined;
    setRunning(false);
    prompt.focus();
  }
}

/** Replaces the agent: the old one is disposed, which also ends its workers. */
function applySettings(next: ModelSettings): void {
  settings = next;
  unsubscribe();
  agent.dispose();
  agent = createDemoAgent(settings);
  unsubscribe = follow(agent);
  showModel();
}

/**
 * Redraws on the store's changes, and says why the agent did not start if it did not
 * (settings it cannot use, a base URL that is no http(s) URL); returns what stops following.
 */
function follow(followed: Agent): () => void {
  followed.ready.catch((error: unknown) => {
    if (agent === followed) showFailure(error);
  });
  return followed.memory.subscribe(onStoreChange);
}

function showModel(): void {
  const offline = usesOfflineModel(settings);
  modelBadge.textContent = offline
    ? 'Offline demo model (a script, not an LLM)'
    : `Model: ${settings.model} at ${settings.baseURL}`;
  modelBadge.dataset.offline = String(offline);
}

/** Offers to resume runs that were waiting for approval when the page last closed. */
async function offerResumes(): Promise<void> {
  const runs = await agent.memory
    .listRuns({ statuses: ['awaiting-approval'] })
    .catch((error: unknown) => {
      showFailure(error);
      return [];
    });
  showResumeOffers(resumeOffers, runs, (run) => void resumeRun(run));
  // The offers take room above the log; its newest entry stays in view.
  scrollToEnd();
}

const pendingRefresh = new Set<
  'conversations' | 'memories' | 'history' | 'documents' | 'proposals'
>();
let refreshTimer: ReturnType<typeof setTimeout> | undefined;

/** Every write to the store (this tab's or another's) lands here; refreshes are batched. */
function onStoreChange(change: StoreChange): void {
  if (change.table === 'conversations') pendingRefresh.add('conversations');
  if (change.table === 'memories') pendingRefresh.add('memories');
  if (change.table === 'documents') pendingRefresh.add('documents');
  if (change.table === 'proposals') pendingRefresh.add('proposals');
  if (change.table === 'messages' && change.conversationId === selectedId) {
    pendingRefresh.add('history');
  }
  if (refreshTimer !== undefined) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = undefined;
    if (pendingRefresh.delete('conversations')) void conversations.refresh();
    if (pendingRefresh.delete('memories')) void memories.refresh();
    if (pendingRefresh.delete('documents')) void knowledgePanel.refresh();
    if (pendingRefresh.delete('proposals')) void learned.refresh();
    if (pendingRefresh.delete('history')) void redrawIfChanged();
  }, 50);
}

/** Another tab (or a resumed run) added messages to the open conversation: show them. */
async function redrawIfChanged(): Promise<void> {
  if (activeRun) return;
  const detail = await agent.memory.getConversation(selectedId).catch(() => undefined);
  if (!detail || activeRun || detail.conversation.id !== selectedId) return;
  if (detail.conversation.lastSeq !== renderedSeq) await openConversation(selectedId);
}

function setRunning(running: boolean): void {
  sendButton.disabled = running;
  stopButton.disabled = !running;
  conversations.setBusy(running);
}

function note(text: string, role?: 'alert'): void {
  log.append(createElement('li', { className: 'note', text, attributes: role ? { role } : {} }));
  scrollToEnd();
}

function showFailure(error: unknown): void {
  note(error instanceof Error ? error.message : String(error), 'alert');
}

function scrollToEnd(): void {
  log.lastElementChild?.scrollIntoView({ block: 'end' });
}
