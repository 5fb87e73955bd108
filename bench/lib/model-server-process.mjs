// The fake model server in a Node process of its own. In the driver's process, its streams
// waited whenever the driver was busy: Playwright's traffic, and above all a page profile
// of several megabytes parsed (and collected) while the next contestant's run was timed.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/** Run as the child: serve, say where, and stop when the parent goes. */
const CHILD_FLAG = '--model-server-child';

/**
 * Starts the server in a child process (over TLS, so HTTP/2, with `tls`).
 * @param {{ tls?: boolean }} [options]
 * @returns {Promise<{ url: string; close(): Promise<void> }>}
 */
export async function startModelServerProcess(options = {}) {
  const child = fork(
    fileURLToPath(import.meta.url),
    [CHILD_FLAG, ...(options.tls ? ['--tls'] : [])],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const exited = once(child, 'exit');
  const url = await Promise.race([
    once(child, 'message').then(([message]) => /** @type {{ url: string }} */ (message).url),
    exited.then(([code]) => {
      throw new Error(`The model server's process exited (${code}) before it listened.`);
    }),
  ]);
  return {
    url,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill();
        await exited;
      }
    },
  };
}

if (process.argv.includes(CHILD_FLAG)) {
  const [{ createServer }, { sharedConfig }, { selfSignedCert }] = await Promise.all([
    import('vite'),
    import('./vite-setup.mjs'),
    import('../../scripts/self-signed-cert.mjs'),
  ]);
  // The server is TypeScript; a throwaway Vite dev server loads it, then goes.
  const loader = await createServer({
    ...(await sharedConfig()),
    server: { middlewareMode: true },
  });
  const { startModelServer } = await loader.ssrLoadModule('/../src/testing.ts');
  await loader.close();
  const server = await startModelServer(
    process.argv.includes('--tls') ? { tls: selfSignedCert() } : {},
  );
  process.send?.({ url: server.url });
  process.once('disconnect', () => {
    server.close().finally(() => process.exit(0));
  });
}
