import * as Comlink from 'comlink';
import { toErrorData } from '../errors/airlock-error';
import { createOpenAIChatModel } from '../model/openai-chat-model';
import type { ChatMessage } from '../protocol/chat';
import type { ToolHost } from '../protocol/tools';
import type { AgentWorkerApi, RunRequest } from '../protocol/wire';
import { parseAgentConfig } from './config-schema';
import { EventSink } from './event-sink';
import { runAgent } from './run-agent';

/**
 * The agent worker's side of the seam: one run at a time, its events over the run's
 * port, and the conversation so far kept for the next run.
 */
export class AgentService implements AgentWorkerApi {
  #history: ChatMessage[] = [];
  #running = false;

  async run(
    request: RunRequest,
    port: MessagePort,
    tools: Comlink.Remote<ToolHost>,
  ): Promise<void> {
    const controller = new AbortController();
    const sink = new EventSink(port, () => controller.abort());
    try {
      if (this.#running) {
        await sink.emit({
          type: 'run-error',
          runId: request.runId,
          error: {
            code: 'run-in-progress',
            message: 'This agent is already running; wait for its run to end or abort it.',
          },
        });
        return;
      }
      this.#running = true;
      try {
        await this.#runOnce(request, sink, tools, controller.signal);
      } finally {
        this.#running = false;
      }
    } finally {
      sink.close();
      // Comlink's proxy of the page's tool host holds a port of its own.
      tools[Comlink.releaseProxy]();
    }
  }

  async #runOnce(
    request: RunRequest,
    sink: EventSink,
    tools: ToolHost,
    signal: AbortSignal,
  ): Promise<void> {
    const emit = (event: Parameters<EventSink['emit']>[0]) => sink.emit(event);
    try {
      const config = parseAgentConfig(request.config);
      const model = createOpenAIChatModel(config.model);
      await emit({ type: 'run-start', runId: request.runId, model: model.name });
      const outcome = await runAgent({
        runId: request.runId,
        input: request.input,
        config,
        model,
        tools,
        history: this.#history,
        signal,
        emit,
      });
      this.#history = [...this.#history, ...outcome.messages];
      await emit({ type: 'run-finish', ...outcome.result });
    } catch (error) {
      await emit({ type: 'run-error', runId: request.runId, error: toErrorData(error) });
    }
  }
}
