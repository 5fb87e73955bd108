/**
 * The offline model's long answer: a tour of what the demo shows, long enough (about
 * 300 words, some seconds of streaming) that Stop can be pressed while it is written.
 */
export const LONG_ANSWER = [
  'Here is the long tour of this page, streamed word by word so you can stop it at any point.',
  'Everything the agent does happens in a Web Worker: the loop that calls the model, reads its streamed answer, runs the tools it asks for and calls the model again with their results.',
  'The page only receives typed events, such as text deltas, tool calls and step summaries, and draws them as they arrive; that is why the page stays responsive while a run goes on.',
  'The tools live in three places.',
  'The weather, the calculator and the slow report run in a sandbox worker of their own; when a call misses its deadline, that worker is terminated and a fresh one takes its place, so a stuck tool cannot hang the run.',
  'The headline tool runs one level further out, in a worker inside a sandboxed iframe with an opaque origin: it cannot open the app’s IndexedDB, read its cookies or reach its server.',
  'The theme tool runs on the page itself, because it has to change the page, and it asks for your approval first.',
  'Conversations, long-term memories, run checkpoints and an audit log of every tool call are kept in IndexedDB by the agent worker, so a reload loses nothing: the sidebar lists the conversations, the memory panel shows what the agent remembers, and a run that was waiting for your approval can be resumed.',
  'Each step of a run is written in one transaction before the next model call.',
  'The run timeline on the right shows each step’s duration, tokens, finish reason and tool calls.',
  'With an API key set on the server, the same page talks to a real model through a small proxy that adds the key, so the browser never sees it.',
  'This answer is long on purpose: press Stop now, and the run ends as aborted, keeping what was written so far.',
].join(' ');
