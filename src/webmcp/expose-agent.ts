import { AirlockError } from '../errors/airlock-error';
import type { Agent } from '../page/agent';
import type { RunOptions } from '../page/agent-options';
import type { RunInput } from '../page/run-input';
import { randomId } from '../runtime/random-id';
import { type WebMCPApprovalHandler, withAppApprovals } from './app-approvals';
import {
  annotationsOf,
  callAgentTool,
  callsConversation,
  exposedSpecs,
  type WebMCPToolsExposure,
} from './expose-tools';
import { type ModelContext, requireModelContext } from './model-context';

export type { WebMCPApprovalRequest } from './app-approvals';

/** The agent offered to other agents on the page as one WebMCP tool: "ask the agent". */
export interface WebMCPAgentTool {
  /** The tool's WebMCP name (default `ask_agent`). */
  readonly name?: string;
  /** What the calling agent reads (default: a sentence saying it runs one turn). */
  readonly description?: string;
  /**
   * Decides each approval the run asks for. Only the app answers: the caller never sees an
   * approval id, and its input cannot carry a decision. Resolve `true` to approve; `false`
   * or a throw rejects that tool call, and the run goes on without it.
   */
  readonly onApproval: WebMCPApprovalHandler;
  /**
   * Options of every run it starts (e.g. `allowedTools`). Each call is a conversation of its
   * own, `webmcp_…`, unless `conversationId` names one: no caller reads another's turns.
   */
  readonly runOptions?: RunOptions;
  /** The longest prompt taken, in characters (default 10 000). */
  readonly maxPromptChars?: number;
}

/** Options of `exposeToWebMCP`: the agent as a tool (`agentTool`), its tools (`tools`), or both. */
export interface ExposeOptions {
  /** The context to register in (default `document.modelContext`). */
  readonly modelContext?: ModelContext;
  /** The agent as one tool, `ask_agent`: a call runs one turn. */
  readonly agentTool?: WebMCPAgentTool;
  /**
   * The agent's tools to register, each as a WebMCP tool of its own under its name (`true`:
   * every tool the agent's worker listed at its start: page tools, sandboxed tools, MCP
   * tools; not the built-in memory and knowledge tools). Needs `toolCalls.onApproval`.
   */
  readonly tools?: readonly string[] | true;
  /** How the calls of `tools` are approved and recorded. */
  readonly toolCalls?: WebMCPToolsExposure;
}

/** Registered tools; `unregister()` removes them (and aborts the runs they started). */
export interface WebMCPExposure {
  readonly names: readonly string[];
  unregister(): void;
}

const DEFAULT_MAX_PROMPT_CHARS = 10_000;

/**
 * Registers the agent with WebMCP as one tool an agent on the page (or a browser's agent)
 * can list and call: the call runs one turn of the agent and answers its text. The run is
 * the agent worker's, like any: allowlists, budgets, guardrails, the flow policy, the audit
 * log, and every approval decided by the app's `onApproval`, never by the caller.
 */
export async function exposeToWebMCP(
  agent: Agent,
  options: ExposeOptions,
): Promise<WebMCPExposure> {
  const context = requireModelContext(options.modelContext);
  const { agentTool, tools, toolCalls } = options;
  if (agentTool === undefined && tools === undefined) {
    throw new AirlockError('invalid-options', 'Give agentTool, tools, or both.');
  }
  if (agentTool !== undefined && typeof agentTool.onApproval !== 'function') {
    throw new AirlockError('invalid-options', 'agentTool.onApproval must be a function.');
  }
  if (tools !== undefined && typeof toolCalls?.onApproval !== 'function') {
    throw new AirlockError('invalid-options', 'toolCalls.onApproval must be a function.');
  }
  const registration = new AbortController();
  const names: string[] = [];
  try {
    if (agentTool)
      names.push(await registerAgentTool(agent, agentTool, context, registration.signal));
    if (tools !== undefined && toolCalls) {
      names.push(...(await registerTools(agent, tools, toolCalls, context, registration.signal)));
    }
  } catch (error) {
    // Nothing stays registered from a failed exposure.
    registration.abort();
    throw error;
  }
  return {
    names,
    unregister: () => registration.abort(new DOMException('Unregistered.', 'AbortError')),
  };
}

/** Registers each named tool of the agent; a call becomes a run of one call (`callAgentTool`). */
async function registerTools(
  agent: Agent,
  wanted: readonly string[] | true,
  toolCalls: WebMCPToolsExposure,
  context: ModelContext,
  signal: AbortSignal,
): Promise<string[]> {
  if (wanted !== true && !Array.isArray(wanted)) {
    throw new AirlockError('invalid-options', 'tools is a list of tool names, or true.');
  }
  const specs = await exposedSpecs(agent, wanted);
  const exposed = specs.map((spec) => spec.name);
  const conversationId = callsConversation(toolCalls);
  // One call at a time: they share a conversation, which runs one run at a time.
  let queue: Promise<unknown> = Promise.resolve();
  for (const spec of specs) {
    await context.registerTool(
      {
        name: spec.name,
        description: spec.description,
        inputSchema: spec.parameters,
        annotations: annotationsOf(spec),
        execute: (input) => {
          const call = queue.then(() =>
            callAgentTool(agent, {
              name: spec.name,
              arguments: input,
              exposed,
              conversationId,
              onApproval: toolCalls.onApproval,
              signal,
            }),
          );
          queue = call.catch(() => undefined);
          return call;
        },
      },
      { signal },
    );
  }
  return exposed;
}

async function registerAgentTool(
  agent: Agent,
  agentTool: WebMCPAgentTool,
  context: ModelContext,
  signal: AbortSignal,
): Promise<string> {
  const name = agentTool.name ?? 'ask_agent';
  const maxChars = agentTool.maxPromptChars ?? DEFAULT_MAX_PROMPT_CHARS;
  await context.registerTool(
    {
      name,
      title: 'Ask the agent',
      description:
        agentTool.description ??
        'Asks the page’s assistant to do one task and answers its final text. Its tools may ask the user for approval.',
      inputSchema: {
        type: 'object',
        properties: { prompt: { type: 'string', maxLength: maxChars } },
        required: ['prompt'],
        additionalProperties: false,
      },
      // It may run tools that change things or send data out, and its text comes from a model.
      annotations: { readOnlyHint: false, untrustedContentHint: true },
      execute: (input) => askAgent(agent, agentTool, checkedPrompt(input, maxChars), signal),
    },
    { signal },
  );
  return name;
}

/** The caller's input, held to its schema here: the browser's check of it is a hint at best. */
function checkedPrompt(input: unknown, maxChars: number): string {
  const fields = typeof input === 'object' && input !== null ? Object.keys(input) : [];
  const prompt = (input as { prompt?: unknown } | null)?.prompt;
  if (typeof prompt !== 'string' || prompt.trim() === '' || fields.length !== 1) {
    throw new AirlockError('invalid-input', 'The input is { prompt: string } and nothing else.');
  }
  if (prompt.length > maxChars) {
    throw new AirlockError('invalid-input', `The prompt is over ${maxChars} characters.`);
  }
  return prompt;
}

/** The app's line that introduces the request. */
const REQUEST_LINE =
  'Another agent on this page asks for the task in the attached request.txt. It is a request from that agent, not the user.';

/**
 * The caller's prompt as an attachment: the flow policy labels what a run's input attaches
 * `untrusted`, as another agent's words are, so a sink it leads to asks or is refused.
 */
function callerInput(prompt: string): RunInput {
  return [
    { type: 'text', text: REQUEST_LINE },
    { type: 'file', data: new File([prompt], 'request.txt', { type: 'text/plain' }) },
  ];
}

async function askAgent(
  agent: Agent,
  agentTool: WebMCPAgentTool,
  prompt: string,
  unregistered: AbortSignal,
): Promise<{ text: string }> {
  const run = agent.run(callerInput(prompt), {
    conversationId: randomId('webmcp'),
    ...agentTool.runOptions,
    signal: unregistered,
  });
  const result = await withAppApprovals(run, agentTool.onApproval);
  return { text: result.text };
}
