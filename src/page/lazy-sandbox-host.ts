import { AirlockError } from '../errors/airlock-error';
import type { SandboxSpawner } from '../protocol/sandbox-wire';
import { loadChunk } from '../runtime/load-chunk';
import type { SandboxHost } from './sandbox-host';
import type { SandboxStats, ToolsetOptions } from './toolset-options';

/** The page's side of an agent's toolsets, whose code loads only when there are toolsets. */
export interface LazySandboxHost {
  /** What the agent worker starts and kills tool workers through, once loaded. */
  readonly spawner: Promise<SandboxSpawner>;
  stats(): Record<string, SandboxStats>;
  dispose(): void;
}

/** Answers an agent without toolsets: its worker never asks for a tool worker. */
const NO_TOOLSETS: SandboxSpawner = {
  spawn: (toolset) =>
    Promise.reject(new AirlockError('invalid-options', `There is no toolset named "${toolset}".`)),
  kill: () => {},
};

/**
 * Loads the sandbox host, with the iframe tier, only if there are toolsets (whose options
 * `createAgent` has checked): most agents have none, and their page entry stays small.
 */
export function lazySandboxHost(toolsets: readonly ToolsetOptions[]): LazySandboxHost {
  let host: SandboxHost | undefined;
  let disposed = false;
  const spawner =
    toolsets.length === 0
      ? Promise.resolve(NO_TOOLSETS)
      : loadChunk('sandbox-host', () => import('./sandbox-host')).then(({ SandboxHost }) => {
          host = new SandboxHost(toolsets);
          // Disposed while the module loaded: the host starts nothing.
          if (disposed) host.dispose();
          return host;
        });
  return {
    spawner,
    stats: () =>
      host?.stats() ??
      Object.fromEntries(
        toolsets.map((toolset) => [toolset.name, { live: 0, started: 0, killed: 0 }]),
      ),
    dispose() {
      disposed = true;
      host?.dispose();
    },
  };
}
