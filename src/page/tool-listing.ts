import type { ToolSpec } from '../protocol/tools';

// The specs of an agent's tools, as its worker listed them at its start, for the WebMCP entry
// (`exposeToWebMCP`). They are found by the very list `agent.ready` resolves with, so the
// page entry (`createAgent`) carries no method for them; a list that is not an agent's finds
// nothing. Specs are descriptions, not authority: every call is decided in the agent worker.

const SPECS = new WeakMap<readonly string[], readonly ToolSpec[]>();

/** Keeps the specs the worker listed with the tool names `ready` resolves with. */
export function noteToolSpecs(names: readonly string[], specs: readonly ToolSpec[]): void {
  SPECS.set(names, specs);
}

/** The specs kept for the names an agent's `ready` resolved with; undefined for any other list. */
export function toolSpecsOf(names: readonly string[]): readonly ToolSpec[] | undefined {
  return SPECS.get(names);
}
