/**
 * The agent worker of the responsiveness comparison's Airlock side: the demo's agent
 * worker, except that each model call first counts the context (the comparison's one
 * synthetic cost, `context-tokens.ts`), here in the worker, where Airlock builds context.
 * Airlock's model client calls `globalThis.fetch` at each request, so wrapping it is enough.
 */
import { serveAgent } from 'airlock-agents/worker';
import { contextCountingFetch } from './context-tokens';

globalThis.fetch = contextCountingFetch(globalThis.fetch.bind(globalThis));
serveAgent();
