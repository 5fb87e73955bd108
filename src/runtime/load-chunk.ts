import { AirlockError } from '../errors/airlock-error';

/**
 * Loads one of the SDK's lazy chunks. `load` is the `import()` itself, written out at the
 * call site (`loadChunk('mcp-servers', () => import('../mcp/mcp-servers'))`): bundlers split
 * only a literal `import()`. A chunk that cannot load (a 404 after a deploy replaced the
 * files, a dropped network, a CSP that refuses it) rejects with `worker-load-failed` naming
 * the chunk in `details.chunk`, not with the browser's raw "Failed to fetch dynamically
 * imported module" (each engine words it differently). `chunk` is the module's file name,
 * which is also the start of the built chunk's file name.
 */
export async function loadChunk<T>(chunk: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new AirlockError(
      'worker-load-failed',
      `Airlock's \`${chunk}\` code could not load (${reason}); check that the built files the app serves are all there and of one build.`,
      { details: { chunk }, cause: error },
    );
  }
}
