// The testing model server a unit test file runs against: one per file, started before its
// tests and closed after them.
import { afterAll, beforeAll } from 'vitest';
import { type ModelServer, startModelServer } from '../../../src/testing';

/** The file's server, as its tests use it: the fixture closes it. */
export type FileModelServer = Pick<ModelServer, 'url' | 'createSession'>;

/**
 * Starts the file's model server in `beforeAll` and closes it in `afterAll`; its `url` and
 * `createSession` answer once `beforeAll` has run.
 */
export function useModelServer(): FileModelServer {
  let server: ModelServer | undefined;
  beforeAll(async () => {
    server = await startModelServer();
  });
  afterAll(() => server?.close());
  const started = (): ModelServer => {
    if (!server) throw new Error('The model server starts in beforeAll.');
    return server;
  };
  return {
    get url() {
      return started().url;
    },
    createSession: (script, options) => started().createSession(script, options),
  };
}
