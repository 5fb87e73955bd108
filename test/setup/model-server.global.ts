import type { TestProject } from 'vitest/node';
import { startModelServer } from '../../src/testing';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Base URL of the scripted model server; tests open sessions on it. */
    modelServerUrl: string;
    /** Runs of the fault soak: 50 in `npm test`, `AIRLOCK_SOAK_RUNS` (1 000 in `npm run soak`). */
    soakRuns: number;
    /** The soak's first seed; run `i` uses `seed + i`. */
    soakSeed: number;
  }
}

/** One scripted model server for the whole run; each test opens its own session on it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startModelServer();
  project.provide('modelServerUrl', server.url);
  project.provide('soakRuns', Number(process.env.AIRLOCK_SOAK_RUNS ?? 50));
  project.provide('soakSeed', Number(process.env.AIRLOCK_SOAK_SEED ?? 20_261_130));
  return () => server.close();
}
