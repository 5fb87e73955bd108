/**
 * Reads the parts of a Chat Completions request body the offline model acts on. The
 * body arrives over HTTP from whatever client calls the dev server, so it is validated.
 */
import { z } from 'zod';

/** A tool call an assistant message made, as the request replays it. */
export interface RequestToolCall {
  readonly id: string;
  readonly name: string;
  readonly argumentsText: string;
}

/** One message of the request, with its content flattened to text. */
export interface RequestMessage {
  readonly role: string;
  readonly text: string;
  readonly toolCalls: readonly RequestToolCall[];
  /** Set on `tool` messages: which call this is the result of. */
  readonly toolCallId?: string;
  /** Images and files the message carries (its `image_url` and `file` parts), by media type. */
  readonly attachments: readonly string[];
}

/** What the offline model needs from a request. */
export interface ChatRequest {
  readonly messages: readonly RequestMessage[];
  /** Names of the tools the client offered; the model must call no others. */
  readonly toolNames: ReadonlySet<string>;
}

const contentSchema = z
  .union([
    z.string(),
    z.array(
      z.object({
        type: z.string(),
        text: z.string().optional(),
        image_url: z.object({ url: z.string() }).optional(),
        file: z.object({ file_data: z.string().optional() }).optional(),
      }),
    ),
  ])
  .nullish();

const requestSchema = z.object({
  messages: z.array(
    z.object({
      role: z.string(),
      content: contentSchema,
      tool_call_id: z.string().optional(),
      tool_calls: z
        .array(
          z.object({
            id: z.string(),
            function: z.object({ name: z.string(), arguments: z.string() }),
          }),
        )
        .optional(),
    }),
  ),
  tools: z.array(z.object({ function: z.object({ name: z.string() }) })).optional(),
});

/** The request's messages and offered tools, or a sentence saying why the body is not usable. */
export function readChatRequest(
  body: unknown,
): { ok: true; request: ChatRequest } | { ok: false; reason: string } {
  const parsed = requestSchema.safeParse(body);
  if (!parsed.success) {
    return { ok: false, reason: z.prettifyError(parsed.error).replaceAll('\n', ' ') };
  }
  const messages = parsed.data.messages.map(
    (message): RequestMessage => ({
      role: message.role,
      text: flattenContent(message.content),
      attachments: attachmentTypes(message.content),
      toolCalls: (message.tool_calls ?? []).map((call) => ({
        id: call.id,
        name: call.function.name,
        argumentsText: call.function.arguments,
      })),
      ...(message.tool_call_id === undefined ? {} : { toolCallId: message.tool_call_id }),
    }),
  );
  const toolNames = new Set((parsed.data.tools ?? []).map((entry) => entry.function.name));
  return { ok: true, request: { messages, toolNames } };
}

/** The media types of a message's images and files (`data:image/png;…` → `image/png`; a URL: `image`). */
function attachmentTypes(content: z.infer<typeof contentSchema>): string[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) => {
    const url = part.image_url?.url ?? part.file?.file_data;
    if (url === undefined) return [];
    return [/^data:([^;,]+)/.exec(url)?.[1] ?? part.type];
  });
}

/** Content may be a string or, in newer clients, a list of parts; only text parts matter here. */
function flattenContent(content: z.infer<typeof contentSchema>): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => part.text ?? '').join('');
}
