// `npm run demo:serve` (after `npm run demo:build`): serves demo/dist with the model
// endpoint at /llm/v1 and prints the URL. PORT picks the port (default 4173; 0: any free).
import { fileURLToPath } from 'node:url';
import { startDemoServer } from './demo-server.mjs';

const root = fileURLToPath(new URL('../demo/dist', import.meta.url));
const port = process.env.PORT === undefined ? 4173 : Number(process.env.PORT);
const server = await startDemoServer({ root, port });
console.log(`\n  Airlock demo: ${server.url}\n  Model endpoint: ${server.description}.\n`);

for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    void server.close().then(() => process.exit(0));
  });
}
