// The proxy bench's upstream, the testing model server, in a process of its own: in the
// client's process, a hundred paced streams' timers waited whenever the client was busy
// reading, and every event arrived late on both sides. Started by bench/proxy.mjs with the
// reply's text, the pause of a paced reply and the prompt that asks for one; answers with
// its session's base URL and stops when the parent goes.
import { loadSourceModule } from './load-module.mjs';

const [text, paceMs, pacedPrompt] = process.argv.slice(2);
if (!text || !paceMs || !pacedPrompt || !process.send)
  throw new Error('Start me from bench/proxy.mjs.');
const { startModelServer } = await loadSourceModule('/src/testing.ts');
const models = await startModelServer();
const session = models.createSession((/** @type {{ body: any }} */ request) =>
  request.body?.messages?.[0]?.content === pacedPrompt
    ? { text, chunkDelayMs: Number(paceMs) }
    : { text },
);
process.send({ type: 'listening', baseURL: session.baseURL });
process.once('disconnect', () => {
  models.close().finally(() => process.exit(0));
});
