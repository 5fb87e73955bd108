import { type Agent, type AgentEvent, createAgent, tool } from 'airlock-agents';
import { z } from 'zod';

/**
 * A page for the two-tab test: one agent on a shared database, driven by the test through
 * `window.tabs`. What each page saw is kept on it for the test to read.
 */
interface TabsPage {
  /** Events of the run this page started. */
  ran: AgentEvent[];
  /** Events of this page's watch. */
  watched: AgentEvent[];
  /** Times the approval-gated tool ran on this page. */
  toolRuns: number;
  start(baseURL: string, database: string): Promise<void>;
  run(conversationId: string, input: string): string;
  watch(conversationId: string): Promise<void>;
  stop(runId: string): Promise<string>;
  approve(approvalId: string): Promise<string>;
  runStatuses(conversationId: string): Promise<string[]>;
}

let agent: Agent | undefined;
let watch: ReturnType<Agent['watch']> | undefined;

const answer = (promise: Promise<void>): Promise<string> =>
  promise.then(
    () => 'ok',
    (error: { code?: string }) => error.code ?? String(error),
  );

const tabs: TabsPage = {
  ran: [],
  watched: [],
  toolRuns: 0,
  async start(baseURL, database) {
    const deleteNote = tool({
      name: 'delete_note',
      description: 'Deletes a note.',
      parameters: z.object({ id: z.string() }),
      needsApproval: true,
      execute: ({ id }) => {
        tabs.toolRuns += 1;
        return { deleted: id };
      },
    });
    agent = createAgent({
      worker: () => new Worker(new URL('./agent.worker.ts', import.meta.url), { type: 'module' }),
      tabs: () =>
        new SharedWorker(new URL('./tabs.worker.ts', import.meta.url), {
          type: 'module',
          name: 'airlock-tabs',
        }),
      model: { baseURL, model: 'airlock-test-model' },
      tools: [deleteNote],
      memory: { database },
    });
    await agent.ready;
  },
  run(conversationId, input) {
    const run = (agent as Agent).run(input, { conversationId });
    run.result.catch(() => {});
    void (async () => {
      for await (const event of run) tabs.ran.push(event);
    })();
    return run.runId;
  },
  async watch(conversationId) {
    watch = (agent as Agent).watch(conversationId);
    void (async () => {
      for await (const event of watch as AsyncIterable<AgentEvent>) tabs.watched.push(event);
    })();
    await watch.listening;
  },
  stop: (runId) => answer((watch as NonNullable<typeof watch>).stop(runId)),
  approve: (approvalId) => answer((watch as NonNullable<typeof watch>).approve(approvalId)),
  async runStatuses(conversationId) {
    const runs = await (agent as Agent).memory.listRuns({ conversationId });
    return runs.map((run) => run.status);
  },
};

(globalThis as unknown as { tabs: TabsPage }).tabs = tabs;
