import type { TestProject } from 'vitest/node';
import { startModelServer } from '../../src/testing';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Base URL of the scripted model server; tests open sessions on it. */
    modelServerUrl: string;
  }
}

/** One scripted model server for the whole run; each test opens its own session on it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startModelServer();
  project.provide('modelServerUrl', server.url);
  return () => server.close();
}
