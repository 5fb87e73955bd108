import { AirlockError } from '../../errors/airlock-error';
import type { ToolSpec } from '../../protocol/tools';
import { loadChunk } from '../../runtime/load-chunk';
import type { CallScope, ToolRunner } from './tool-runner';

/** A tool the agent can call: what the model is told, its policy, and where it runs. */
export interface RegisteredTool {
  readonly spec: ToolSpec;
  readonly runner: ToolRunner;
  /** The deadline when the tool sets none. */
  readonly defaultTimeoutMs: number;
}

/** Every tool of an agent by name, from the page and from each toolset. */
export class ToolRegistry {
  readonly #tools = new Map<string, RegisteredTool>();

  /** Adds tools that run in one place; a name used twice is an `invalid-options` error. */
  add(
    specs: readonly ToolSpec[],
    runner: ToolRunner,
    defaultTimeoutMs: number,
    where: string,
  ): void {
    for (const spec of specs) {
      if (this.#tools.has(spec.name)) {
        throw new AirlockError(
          'invalid-options',
          `Two tools are named "${spec.name}" (the second in ${where}).`,
        );
      }
      this.#tools.set(spec.name, { spec, runner, defaultTimeoutMs });
    }
  }

  /**
   * Puts `specs` in place of the tools `runner` had (an MCP server's list changed). A name
   * another runner holds is skipped rather than taken: the first owner keeps it. Runs that
   * started before keep the tools they were offered.
   */
  replace(
    runner: ToolRunner,
    specs: readonly ToolSpec[],
    defaultTimeoutMs: number,
    where: string,
  ): void {
    for (const [name, tool] of this.#tools) {
      if (tool.runner === runner) this.#tools.delete(name);
    }
    this.add(
      specs.filter((spec) => !this.#tools.has(spec.name)),
      runner,
      defaultTimeoutMs,
      where,
    );
  }

  /** A copy with more tools, leaving this registry as it is (e.g. one run's built-in tools). */
  extended(
    specs: readonly ToolSpec[],
    runner: ToolRunner,
    defaultTimeoutMs: number,
    where: string,
  ): ToolRegistry {
    const copy = new ToolRegistry();
    for (const [name, tool] of this.#tools) copy.#tools.set(name, tool);
    copy.add(specs, runner, defaultTimeoutMs, where);
    return copy;
  }

  /**
   * Checks the tools each code tool may call and lists them in its description, once every
   * tool is registered. A code tool that names a missing tool, or another code tool, is an
   * `invalid-options` error. The signatures' renderer loads only for an agent that has a
   * code tool granted tools (most have none).
   */
  async describeCallableTools(): Promise<void> {
    const callers = [...this.#tools].filter(
      ([, tool]) => (tool.spec.callableTools ?? []).length > 0,
    );
    if (callers.length === 0) return;
    const { withCallableSignatures } = await loadChunk(
      'callable-signatures',
      () => import('./callable-signatures'),
    );
    for (const [name, tool] of callers) {
      const specs = (tool.spec.callableTools ?? []).map((callee) => {
        const found = this.#tools.get(callee);
        if (!found || (found.spec.callableTools?.length ?? 0) > 0) {
          throw new AirlockError(
            'invalid-options',
            `Tool "${name}" may call "${callee}", which ${found ? 'calls tools itself' : 'no tool is called'}.`,
          );
        }
        return found.spec;
      });
      const description = withCallableSignatures(tool.spec, specs);
      this.#tools.set(name, { ...tool, spec: { ...tool.spec, description } });
    }
  }

  get(name: string): RegisteredTool | undefined {
    return this.#tools.get(name);
  }

  /** The specs of the tools `allowed` admits, in registration order. */
  specs(allowed: (name: string) => boolean): ToolSpec[] {
    return [...this.#tools.values()].map((tool) => tool.spec).filter((spec) => allowed(spec.name));
  }

  /** Tells every runner that a run ended, so workers that served it alone can go. */
  endRun(scope: CallScope): void {
    const runners = new Set([...this.#tools.values()].map((tool) => tool.runner));
    for (const runner of runners) runner.endRun?.(scope);
  }

  get names(): string[] {
    return [...this.#tools.keys()];
  }
}
