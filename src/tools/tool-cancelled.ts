import { type ToolFailure, toolFailure } from './tool-failure';

/**
 * The outcome of a call cancelled before its tool answered: the one way every host (the page,
 * a sandbox, an MCP server, the run) builds it. `because` ends the sentence when it says more.
 */
export function toolCancelled(toolName: string, because?: string): ToolFailure {
  const reason = because === undefined ? '' : ` because ${because}`;
  return toolFailure('tool-cancelled', `Tool "${toolName}" was cancelled${reason}.`);
}
