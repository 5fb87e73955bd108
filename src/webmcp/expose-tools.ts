import { AirlockError } from '../errors/airlock-error';
import type { Agent } from '../page/agent';
import type { RunOptions } from '../page/agent-options';
import type { RunInput } from '../page/run-input';
import { toolSpecsOf } from '../page/tool-listing';
import type { ToolErrorCode } from '../protocol/errors';
import type { ToolSpec } from '../protocol/tools';
import { randomId } from '../runtime/random-id';
import {
  type WebMCPApprovalHandler,
  type WebMCPApprovalRequest,
  withAppApprovals,
} from './app-approvals';
import type { ToolAnnotations } from './model-context';

// Each of the agent's tools as a WebMCP tool of its own. The page only forwards: a call is
// a run of the agent worker that makes that one call (`toolCall`), decided there like the
// model's own calls; approvals go to the app's `onApproval`, never to the caller.

/** An approval a WebMCP caller's tool call waits for (the same shape as the agent tool's). */
export type WebMCPToolApprovalRequest = WebMCPApprovalRequest;

/** Options of the agent's tools as WebMCP tools (`exposeToWebMCP`'s `tools`). */
export interface WebMCPToolsExposure {
  /**
   * Decides each approval a call asks for (the tool's own approval policy, or the flow
   * policy's). `true` approves; `false` or a throw rejects the call, which then never runs.
   */
  readonly onApproval: WebMCPApprovalHandler;
  /**
   * The conversation the calls are recorded in (default one of their own, `webmcp_…`, per
   * exposure): their audit rows, and what the conversation's budgets count.
   */
  readonly conversationId?: string;
}

/** Why a WebMCP caller's tool call gave no result: the code of the tool error, as the model would read it. */
export class WebMCPToolError extends Error {
  override readonly name = 'WebMCPToolError';
  readonly code: ToolErrorCode;
  constructor(code: ToolErrorCode, message: string) {
    super(`${code}: ${message}`);
    this.code = code;
  }
}

/** The hints WebMCP shows of a tool, from its policy; hints, never the decision. */
export function annotationsOf(spec: ToolSpec): Required<ToolAnnotations> {
  const { approval, sink, output } = spec.policy;
  return {
    readOnlyHint: approval === 'never' && sink === undefined,
    untrustedContentHint: spec.mcpServer !== undefined || output?.integrity !== 'trusted',
  };
}

/** The specs of the tools `wanted` names (all for `true`), from the agent's start. */
export async function exposedSpecs(
  agent: Agent,
  wanted: readonly string[] | true,
): Promise<readonly ToolSpec[]> {
  const names = await agent.ready;
  const specs = toolSpecsOf(names);
  if (!specs) {
    throw new AirlockError(
      'invalid-usage',
      "The agent's worker did not list its tools' specs (a worker older than this page?).",
    );
  }
  if (wanted === true) return specs;
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  return wanted.map((name) => {
    const spec = byName.get(name);
    if (!spec) {
      throw new AirlockError('invalid-options', `The agent has no tool named "${name}".`, {
        details: { field: 'tools' },
      });
    }
    return spec;
  });
}

/** The caller's arguments as an attached file: another agent's words, labelled `untrusted`. */
function callerInput(name: string, args: unknown): RunInput {
  return [
    {
      type: 'text',
      text: `An agent on this page calls the tool ${name} with the attached arguments.`,
    },
    {
      type: 'file',
      data: new File([JSON.stringify(args) ?? '{}'], 'arguments.json', {
        type: 'application/json',
      }),
    },
  ];
}

/**
 * Runs one call of a WebMCP caller in the agent worker and answers the tool's output. The
 * exposed names are the run's allowlist, so no other tool can run, whatever the call says.
 */
export async function callAgentTool(
  agent: Agent,
  call: {
    readonly name: string;
    readonly arguments: unknown;
    readonly exposed: readonly string[];
    readonly conversationId: string;
    readonly onApproval: WebMCPToolsExposure['onApproval'];
    readonly signal: AbortSignal;
  },
): Promise<unknown> {
  const options: RunOptions = {
    conversationId: call.conversationId,
    allowedTools: call.exposed,
    toolCall: { caller: 'webmcp', name: call.name, arguments: call.arguments },
    signal: call.signal,
  };
  const run = agent.run(callerInput(call.name, call.arguments), options);
  const result = await withAppApprovals(run, call.onApproval);
  // The worker's answer (`direct-tool-call.ts`): the output, or why the caller gets none.
  const answer = JSON.parse(result.text) as
    | { ok: true; output: unknown }
    | { ok: false; error: { code: ToolErrorCode; message: string } };
  if (!answer.ok) throw new WebMCPToolError(answer.error.code, answer.error.message);
  return answer.output;
}

/** A conversation of the exposure's own, unless the app names one. */
export function callsConversation(exposure: WebMCPToolsExposure): string {
  return exposure.conversationId ?? randomId('webmcp');
}
