// The contestants, in report order. Pure data shared by the page harness and the Node driver.

/** A contestant's key: its module in `contestants/` and its `?peer=` name. */
export type ContestantName = 'airlock' | 'vercel-ai' | 'openai-agents' | 'raw-page' | 'raw-worker';

/** How the report describes a contestant. */
export interface ContestantInfo {
  readonly name: ContestantName;
  readonly label: string;
  /** Where its loop (model client, stream parsing, tool dispatch) runs. */
  readonly loop: 'page' | 'worker';
  /** A library, or a hand-written baseline. */
  readonly kind: 'library' | 'baseline';
  /** The npm packages whose versions the report lists for it. */
  readonly packages: readonly string[];
  /** How it is set up, in a line. */
  readonly setup: string;
}

/** Every contestant, Airlock first. */
export const ROSTER: readonly ContestantInfo[] = [
  {
    name: 'airlock',
    label: 'Airlock',
    loop: 'worker',
    kind: 'library',
    packages: ['openai', 'zod', 'comlink', 'dexie'],
    setup:
      '`createAgent` with one page tool (zod schema, runs on the page); loop, `openai` and IndexedDB in the agent worker; memory `{ tools: false, summarize: false }`; a fresh database each round (a new browser context), a new conversation each run',
  },
  {
    name: 'vercel-ai',
    label: 'Vercel AI SDK',
    loop: 'page',
    kind: 'library',
    packages: ['ai', '@ai-sdk/openai', 'zod'],
    setup:
      '`streamText` with `createOpenAI({ baseURL }).chat(model)`, one `tool` (zod), `stopWhen: stepCountIs(10)`, `fullStream` read on the page',
  },
  {
    name: 'openai-agents',
    label: 'OpenAI Agents SDK',
    loop: 'page',
    kind: 'library',
    packages: ['@openai/agents', 'openai (its own copy)', 'zod'],
    setup:
      '`run(agent, input, { stream: true })` with `OpenAIChatCompletionsModel` over `new OpenAI({ baseURL, dangerouslyAllowBrowser: true })`, one `tool` (zod), tracing disabled',
  },
  {
    name: 'raw-page',
    label: 'hand-written loop, page',
    loop: 'page',
    kind: 'baseline',
    packages: ['openai'],
    setup:
      '`openai` `chat.completions.create({ stream: true })` in a loop on the page; tool arguments parsed with `JSON.parse`, not validated',
  },
  {
    name: 'raw-worker',
    label: 'hand-written loop, worker',
    loop: 'worker',
    kind: 'baseline',
    packages: ['openai'],
    setup:
      'the same loop in a plain module worker; one `postMessage` per text delta; the tool runs on the page (a message each way), as Airlock page tools do',
  },
];
