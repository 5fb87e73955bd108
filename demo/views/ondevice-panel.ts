/**
 * The on-device model panel (issue #51): a run of the tiny test GGUF through `wasmModel` in
 * an agent worker of its own, showing each `model-load` phase (checking the cache,
 * downloading with bytes, loading into llama.cpp, ready) while the answer waits, where the
 * weights are kept and how much space they take (`wasmModelCache`), and a button that clears
 * them, after which the next run downloads again. Where the engine cannot run (WebKit has no
 * WebAssembly memory64), the typed `model-unavailable` error is shown as it came.
 */
import { type Agent, type AgentEvent, createAgent, isAirlockError } from 'airlock-agents';
import { type ModelLoadProgress, WASM_MODEL_CACHE, wasmModelCache } from 'airlock-agents/models';
import { ONDEVICE_DATABASE, TINY_MODEL_NAME } from '../ondevice/ondevice-names';
import { createElement, requireElement } from './dom';

/** What the panel asks the tiny model. */
const QUESTION = 'Say hello.';

/** Wires `#ondevice` of index.html; its agent starts on the first click. */
export function createOnDevicePanel(): void {
  const root = requireElement('ondevice', HTMLElement);
  const runButton = requireElement('ondevice-run', HTMLButtonElement);
  const clearButton = requireElement('ondevice-clear', HTMLButtonElement);
  const progress = requireElement('ondevice-progress', HTMLParagraphElement);
  const phases = requireElement('ondevice-phases', HTMLOListElement);
  const answer = requireElement('ondevice-answer', HTMLParagraphElement);
  const failure = requireElement('ondevice-error', HTMLParagraphElement);
  const storage = requireElement('ondevice-storage', HTMLParagraphElement);
  let agent: Agent | undefined;

  runButton.addEventListener('click', () => void ask());
  clearButton.addEventListener('click', () => void clear());
  void showStorage();

  async function ask(): Promise<void> {
    agent ??= createAgent({
      worker: () =>
        new Worker(new URL('../ondevice/ondevice-agent.worker.ts', import.meta.url), {
          type: 'module',
        }),
      model: { model: TINY_MODEL_NAME },
      // No built-in memory tools: their descriptions alone outgrow the tiny model's context
      // (2,048 byte-sized tokens), and it has nothing to remember.
      memory: { database: ONDEVICE_DATABASE, tools: false },
    });
    setBusy(true);
    root.dataset.state = 'running';
    delete root.dataset.errorCode;
    phases.replaceChildren();
    progress.textContent = 'Waiting for the model…';
    answer.textContent = '';
    failure.hidden = true;
    try {
      const run = agent.run(QUESTION);
      for await (const event of run) showEvent(event);
      const result = await run.result;
      answer.textContent = `Answer (gibberish: a tiny test model, not a language model): “${result.text}”`;
      root.dataset.state = 'done';
    } catch (error) {
      showFailure(error);
    } finally {
      setBusy(false);
      await showStorage();
    }
  }

  function showEvent(event: AgentEvent): void {
    if (event.type === 'model-load') showLoad(event);
    else if (event.type === 'text-delta') answer.textContent += event.delta;
  }

  function showLoad(load: ModelLoadProgress): void {
    const line = describeLoad(load);
    progress.textContent = line;
    root.dataset.phase = load.phase;
    // One line per phase; the download's line is rewritten as bytes arrive.
    const last = phases.lastElementChild;
    if (last instanceof HTMLLIElement && last.dataset.phase === load.phase) {
      last.textContent = line;
    } else {
      phases.append(createElement('li', { text: line, attributes: { 'data-phase': load.phase } }));
    }
  }

  function showFailure(error: unknown): void {
    root.dataset.state = 'error';
    failure.hidden = false;
    if (!isAirlockError(error)) {
      failure.textContent = `The run failed: ${error instanceof Error ? error.message : String(error)}`;
      return;
    }
    root.dataset.errorCode = error.code;
    const reason = error.details?.reason;
    failure.textContent = `${error.code}${typeof reason === 'string' ? ` (${reason})` : ''}: ${error.message}`;
    progress.textContent =
      error.code === 'model-unavailable'
        ? 'The on-device model cannot run in this browser.'
        : 'The on-device run failed.';
  }

  async function clear(): Promise<void> {
    setBusy(true);
    try {
      // The loaded engine holds the weights in memory: end it, so the next run loads anew.
      agent?.dispose();
      agent = undefined;
      await wasmModelCache.clear();
      phases.replaceChildren();
      progress.textContent = 'Cleared: the next run downloads the weights again.';
      delete root.dataset.phase;
    } finally {
      setBusy(false);
      await showStorage();
    }
  }

  async function showStorage(): Promise<void> {
    try {
      const [files, use] = await Promise.all([wasmModelCache.list(), wasmModelCache.usage()]);
      root.dataset.cachedBytes = String(use.modelBytes);
      const where =
        files.length === 0
          ? 'No model weights are cached on this device.'
          : `Cached in this browser's Cache API, cache “${WASM_MODEL_CACHE}”: ${files
              .map((file) => `${new URL(file.url).pathname} (${formatBytes(file.bytes)})`)
              .join(', ')}.`;
      const site =
        use.usage === undefined
          ? ''
          : ` This site stores ${formatBytes(use.usage)}${use.quota === undefined ? '' : ` of ${formatBytes(use.quota)} allowed`}.`;
      storage.textContent = `${where} Models: ${formatBytes(use.modelBytes)}.${site}`;
    } catch (error) {
      storage.textContent = `Cannot read the model cache: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  function setBusy(busy: boolean): void {
    runButton.disabled = busy;
    clearButton.disabled = busy;
  }
}

/** One `model-load` step in words. */
function describeLoad(load: ModelLoadProgress): string {
  switch (load.phase) {
    case 'checking':
      return 'Checking the cache for the weights…';
    case 'downloading': {
      const total = load.totalBytes === undefined ? '' : ` of ${formatBytes(load.totalBytes)}`;
      return `Downloading: ${formatBytes(load.loadedBytes ?? 0)}${total}`;
    }
    case 'loading':
      return 'Loading the weights into llama.cpp…';
    case 'ready':
      return load.cached ? 'Ready (the weights came from the cache).' : 'Ready (downloaded).';
  }
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
