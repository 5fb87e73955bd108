import type { ChatMessage } from '../../protocol/chat';
import type {
  CallFlow,
  FlowLabel,
  FlowPolicy,
  FlowSource,
  RunFlow,
  ValueLabel,
} from '../../protocol/labels';
import { MAX_LEVEL_CHARS } from '../../protocol/labels';
import type { ToolCheck, ToolSpec } from '../../protocol/tools';
import { decideFlow, EMPTY_LABEL, type FlowDecision, joinLabels } from './flow-decision';

// A run's labels as they grow: what its context started with, then each tool result. Loaded
// as its own chunk, by runs that track labels only (a `flow` policy, or the run's `labels`).

/** The most untrusted sources a run keeps (and an approval request lists); the first are kept. */
const MAX_SOURCES = 50;

/** The data messages Airlock writes itself (memories, summary, knowledge), by their element. */
const DATA_KIND = /^<airlock_data kind="(memories|summary|knowledge)"/;

/** A chunk's element in a knowledge message (attributes encoded: no `"` inside one). */
const CHUNK = /<source title="([^"]*)" doc="([^"]*)" chunk="(\d+)"/g;

const UNTRUSTED: ValueLabel = { integrity: 'untrusted' };

/** What the policy made of one call: what to do, the labels it carried, the sources in play. */
export interface FlowVerdict extends FlowDecision {
  readonly flow: CallFlow;
  /** For a refused call: what the model is told, so it can answer without the call. */
  readonly message: string;
  /** The untrusted sources in the context when the call was decided. */
  readonly sources: readonly FlowSource[];
}

/**
 * Keeps one run's label: the join of everything in its context so far, and the untrusted
 * sources that made it so, and decides each call by the agent's policy. Every change is
 * handed to `onChange`, which keeps it with the run's row.
 */
export class RunFlowTracker {
  readonly #policy: FlowPolicy | undefined;
  readonly #onChange: (flow: RunFlow) => void;
  #label: FlowLabel;
  readonly #sources: FlowSource[];

  /**
   * @param policy the agent's; without one the labels are kept (for the model request's
   *   `label`) and no call is decided.
   * @param storedValue the run row's `flow`, checked here (a row is data, not authority).
   */
  constructor(
    policy: FlowPolicy | undefined,
    storedValue: unknown,
    onChange: (flow: RunFlow) => void,
  ) {
    this.#policy = policy;
    this.#onChange = onChange;
    const stored = storedFlow(storedValue);
    this.#label = stored
      ? joinLabels(EMPTY_LABEL, {
          confidentiality: stored.confidentiality,
          integrity: stored.integrity,
        })
      : EMPTY_LABEL;
    this.#sources = [...(stored?.sources ?? [])];
  }

  /** The run's labels now, as stored. */
  get state(): RunFlow {
    return { ...this.#label, sources: [...this.#sources] };
  }

  /**
   * Labels what the context holds as the run starts: Airlock's data messages (memories, the
   * summary, knowledge), tool results of earlier steps and runs, and attachments, all
   * `untrusted`. The input's own text is the user's: `trusted`, at the run's level. Each
   * memory is named by its id and key (`memories`, as the context holds them) and each
   * knowledge chunk by `doc#chunk`, so an approval shows which one is in play.
   */
  noteContext(
    messages: readonly ChatMessage[],
    memories: readonly (readonly [id: string, key: string, ...rest: unknown[]])[] = [],
  ): void {
    for (const [index, message] of messages.entries()) {
      if (message.role === 'tool') {
        this.#add(UNTRUSTED, { kind: 'history', id: message.tool_call_id });
      } else if (message.role !== 'user') {
        // The app's system text and the model's own messages add no label.
      } else if (typeof message.content === 'string') {
        const kind = DATA_KIND.exec(message.content)?.[1];
        const at = `context:${index}`;
        if (kind === 'memories' && memories.length > 0)
          for (const [id, key] of memories)
            this.#add(UNTRUSTED, { kind: 'memory', name: key.slice(0, 200), id: id.slice(0, 300) });
        else if (kind === 'knowledge') this.#noteChunks(message.content, at);
        else if (kind)
          this.#add(UNTRUSTED, { kind: kind === 'memories' ? 'memory' : 'summary', id: at });
      } else {
        for (const part of message.content) {
          if (part.type === 'text') continue;
          const name = part.type === 'file' ? part.filename : 'image';
          this.#add(UNTRUSTED, { kind: 'attachment', name, id: `context:${index}` });
        }
      }
    }
    this.#onChange(this.state);
  }

  /** One source per chunk of a knowledge message, named by its document and chunk. */
  #noteChunks(content: string, at: string): void {
    let named = false;
    for (const [, title = '', doc = '', chunk = ''] of content.matchAll(CHUNK)) {
      named = true;
      // As the element holds them (attribute-encoded): decoding here would pull the decoder into the start bundle.
      const id = `${doc}#${chunk}`.slice(0, 300);
      this.#add(UNTRUSTED, { kind: 'knowledge', name: title.slice(0, 200), id });
    }
    if (!named) this.#add(UNTRUSTED, { kind: 'knowledge', id: at });
  }

  /** Decides a checked call: whether the tool is a sink here, where to, and what the context allows. */
  decide(spec: ToolSpec, check: Extract<ToolCheck, { ok: true }>): FlowVerdict | undefined {
    const policy = this.#policy;
    if (!policy) return undefined;
    const answer =
      spec.policy.sink === 'by-arguments' ? (check.sink ?? true) : spec.policy.sink === 'always';
    const destination = typeof answer === 'string' ? answer : answer ? spec.name : undefined;
    const decision = decideFlow(
      this.#label,
      { sink: answer !== false, ...(destination === undefined ? {} : { destination }) },
      policy,
    );
    const flow: CallFlow = {
      ...this.#label,
      rule: decision.rule,
      ...(destination === undefined ? {} : { destination }),
    };
    const sources = [...this.#sources];
    return { ...decision, flow, sources, message: refusal(spec.name, flow, sources) };
  }

  /**
   * Joins what a tool answered into the context: the tool's declared output label (by
   * default `untrusted`), and always `untrusted` for an MCP server's answer, whatever the
   * server's annotations say.
   */
  noteResult(spec: ToolSpec, callId: string): void {
    const declared = spec.policy.output ?? {};
    const label: ValueLabel = spec.mcpServer
      ? { ...declared, integrity: 'untrusted' }
      : { integrity: 'untrusted', ...declared };
    const source: FlowSource = spec.mcpServer
      ? { kind: 'mcp', name: spec.mcpServer, id: callId }
      : { kind: 'tool', name: spec.name, id: callId };
    this.#add(label, source);
    this.#onChange(this.state);
  }

  #add(label: ValueLabel, source: FlowSource): void {
    this.#label = joinLabels(this.#label, label);
    if (label.integrity !== 'untrusted' || this.#sources.length >= MAX_SOURCES) return;
    const known = this.#sources.some(
      (seen) => seen.kind === source.kind && seen.id === source.id && seen.name === source.name,
    );
    if (!known) this.#sources.push(source);
  }
}

/** What the model is told of a call the flow policy refused. */
function refusal(toolName: string, flow: CallFlow, sources: readonly FlowSource[]): string {
  const refused = `The call to "${toolName}" was refused by the information-flow policy`;
  if (flow.rule === 'destination-refused') {
    const where =
      flow.destination === undefined ? 'a destination it did not name' : `"${flow.destination}"`;
    return `${refused}: the context holds data labelled ${flow.confidentiality.join(', ')}, which may not be sent to ${where}.`;
  }
  const from = sources.slice(0, 5).map((source) => source.name ?? source.kind);
  return `${refused}: it sends data out, and the context holds untrusted data (from ${from.join(', ') || 'an untrusted source'}).`;
}

const SOURCE_KINDS: readonly string[] = [
  'tool',
  'mcp',
  'memory',
  'summary',
  'knowledge',
  'attachment',
  'history',
];

/** The most conservative label: what a run is given when its stored labels cannot be read. */
const UNREADABLE: RunFlow = {
  confidentiality: ['private'],
  integrity: 'untrusted',
  sources: [{ kind: 'history', name: 'unreadable stored labels' }],
};

/**
 * A stored row's labels, checked (the row is sealed, but a row is data to check): none for
 * a run stored without them, and the most conservative label for any that do not parse.
 */
function storedFlow(value: unknown): RunFlow | undefined {
  if (value === undefined) return undefined;
  const flow = value as Partial<RunFlow>;
  const text = (item: unknown, max: number) => typeof item === 'string' && item.length <= max;
  const fits =
    typeof value === 'object' &&
    value !== null &&
    (flow.integrity === 'trusted' || flow.integrity === 'untrusted') &&
    Array.isArray(flow.confidentiality) &&
    flow.confidentiality.length <= 64 &&
    flow.confidentiality.every((level) => text(level, MAX_LEVEL_CHARS)) &&
    Array.isArray(flow.sources) &&
    flow.sources.length <= MAX_SOURCES &&
    flow.sources.every(
      (source: Partial<FlowSource> | null) =>
        typeof source === 'object' &&
        source !== null &&
        SOURCE_KINDS.includes(source.kind as string) &&
        (source.name === undefined || text(source.name, 200)) &&
        (source.id === undefined || text(source.id, 300)),
    );
  return fits ? (value as RunFlow) : UNREADABLE;
}
