import type { UIMessage } from 'ai';
import { decodeDataText } from '../model/data-encoding';
import type { Agent } from '../page/agent';
import type { ChatToolCall, UserContentPart } from '../protocol/chat';
import type { MessageRecord } from '../protocol/memory';
import type { AirlockDataParts, AirlockMessageMetadata } from './message-parts';

/** The UI message the transport streams: Airlock's metadata and data parts, tools untyped. */
export type AirlockUIMessage = UIMessage<AirlockMessageMetadata, AirlockDataParts>;

type Part = AirlockUIMessage['parts'][number];

/**
 * A stored conversation as UI messages, for `useChat({ messages })` / `new Chat({ messages })`
 * after a reload: one user message per input, one assistant message per run (its steps'
 * text and tool calls with their results). The partial text of a run that was cut (a closed
 * tab, a dropped stream, an abort) is followed by a `data-interrupted` part; a turn the
 * endpoint refused keeps its messages, with `metadata.refused`. An unknown conversation is an
 * empty chat. A run
 * that waits for approval shows its finished steps here; `reconnectToStream` brings its
 * pending calls back.
 */
export async function loadChatMessages(
  agent: Agent,
  conversationId: string,
): Promise<AirlockUIMessage[]> {
  const detail = await agent.memory.getConversation(conversationId);
  return detail ? toUIMessages(detail.messages) : [];
}

/**
 * The id `loadChatMessages` gives the UI message that starts at stored message `seq`: the
 * transport reads it back to know which stored turn a chat's message is.
 */
export function storedMessageId(conversationId: string, seq: number): string {
  return `${conversationId}:${seq}`;
}

/** The stored `seq` a `storedMessageId` of the conversation names, or `undefined` for another id. */
export function storedSeqOf(conversationId: string, messageId: string): number | undefined {
  const prefix = `${conversationId}:`;
  if (!messageId.startsWith(prefix)) return undefined;
  const digits = messageId.slice(prefix.length);
  return /^[1-9][0-9]{0,15}$/.test(digits) ? Number(digits) : undefined;
}

/** Stored messages (in `seq` order) as UI messages. */
export function toUIMessages(records: readonly MessageRecord[]): AirlockUIMessage[] {
  const messages: AirlockUIMessage[] = [];
  let assistant: { message: AirlockUIMessage; runId: string } | undefined;
  /** Tool parts by call id, so a tool message fills in its call's part. */
  const calls = new Map<string, number>();
  for (const record of records) {
    const { message } = record;
    const id = storedMessageId(record.conversationId, record.seq);
    const refused = record.status === 'refused' ? { refused: true } : {};
    if (message.role === 'user' || message.role === 'system') {
      assistant = undefined;
      messages.push({
        id,
        role: message.role,
        ...(record.status === 'refused'
          ? {
              metadata: {
                runId: record.runId,
                conversationId: record.conversationId,
                refused: true,
              },
            }
          : {}),
        parts: userParts(message.content),
      });
      continue;
    }
    if (!assistant || assistant.runId !== record.runId) {
      assistant = {
        runId: record.runId,
        message: {
          id,
          role: 'assistant',
          metadata: { runId: record.runId, conversationId: record.conversationId, ...refused },
          parts: [],
        },
      };
      messages.push(assistant.message);
    }
    const parts = assistant.message.parts;
    if (message.role === 'assistant') {
      parts.push({ type: 'step-start' });
      if (message.reasoning)
        parts.push({ type: 'reasoning', text: message.reasoning, state: 'done' });
      if (message.content) parts.push({ type: 'text', text: message.content, state: 'done' });
      // Text of a run that was cut: shown, marked, and never sent to the model again.
      if (record.status === 'interrupted')
        parts.push({ type: 'data-interrupted', data: { seq: record.seq } });
      for (const call of message.tool_calls ?? []) {
        calls.set(call.id, parts.length);
        parts.push(pendingToolPart(call));
      }
    } else {
      const index = calls.get(message.tool_call_id);
      const part = index === undefined ? undefined : parts[index];
      if (index !== undefined && part) parts[index] = settledToolPart(part, message.content);
    }
  }
  return messages;
}

/**
 * A stored user message's parts: its text, and each attachment as an `attachment` data part
 * naming it (`{ hash, mediaType, size }`, with the file's name): the store keeps the bytes,
 * not a URL a UI could show, so the app decides how to render one. An image the model
 * fetched by `https:` URL is a file part.
 */
function userParts(content: string | readonly UserContentPart[]): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part): Part => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'image')
      return 'url' in part
        ? { type: 'file', mediaType: 'image/*', url: part.url }
        : { type: 'data-attachment', data: { ...part.attachment } };
    return 'attachment' in part
      ? { type: 'data-attachment', data: { ...part.attachment, filename: part.filename } }
      : { type: 'file', mediaType: 'application/octet-stream', url: part.data };
  });
}

/** A call whose result is not stored (yet): its input is available. */
function pendingToolPart(call: ChatToolCall): Part {
  return {
    type: `tool-${call.function.name}`,
    toolCallId: call.id,
    state: 'input-available',
    input: parseJson(call.function.arguments),
  } as Part;
}

/** Reads the stored tool message (`<tool_output … status="ok|error">body</tool_output>`) into the call's part. */
function settledToolPart(part: Part, content: string): Part {
  const match = /^<tool_output [^>]*status="(ok|error)">([\s\S]*)<\/tool_output>$/.exec(content);
  const call = part as Part & { input: unknown };
  if (!match) return { ...call, state: 'output-available', output: content } as Part;
  const body = parseJson(decodeDataText(match[2] ?? ''));
  if (match[1] === 'ok') return { ...call, state: 'output-available', output: body } as Part;
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (error?.code === 'tool-rejected') {
    return { ...call, state: 'output-denied', approval: { id: '', approved: false } } as Part;
  }
  const errorText = typeof error?.message === 'string' ? error.message : String(body);
  return { ...call, state: 'output-error', errorText } as Part;
}

/** JSON text as a value, or the text itself when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
