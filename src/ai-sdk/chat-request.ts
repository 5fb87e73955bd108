import type { UIMessage } from 'ai';
import {
  arrayCheck,
  booleanCheck,
  type FieldCheck,
  idCheck,
  invalidField,
  isRecord,
  MAX_ID_CHARS,
  oneOfCheck,
  optional,
  shapeCheck,
  signalCheck,
  stringCheck,
} from '../errors/field-checks';
import type { RunInput, RunInputPart } from '../page/run-input';

// What `useChat` hands the transport is the app's state, which any code of the page (or a
// stale tab, or a bug) may have shaped: every request is checked here before the transport
// reads it, so a malformed one ends in one `invalid-input` naming the field, never in a
// `TypeError` halfway through a run or a cut.

/** Why the chat asks for an answer: a new (or edited) user message, or a regenerated answer. */
export type ChatTrigger = 'submit-message' | 'regenerate-message';

/** A `sendMessages` request once checked: what the transport reads of it. */
export interface ChatRequest<UI_MESSAGE extends UIMessage> {
  readonly chatId: string;
  readonly trigger: ChatTrigger;
  /** The message an edit replaces, or the answer a regenerate replaces (the SDK's `messageId`). */
  readonly messageId: string | undefined;
  /** The chat as the app shows it; never empty, ids unique. */
  readonly messages: readonly UI_MESSAGE[];
  readonly abortSignal: AbortSignal | undefined;
}

/** The longest message id taken: the SDK's are 16 characters, `loadChatMessages`' a chat id and a number. */
const MAX_MESSAGE_ID_CHARS = 2 * MAX_ID_CHARS;

const text = stringCheck();
const messageIdCheck = stringCheck({ nonBlank: true, maxChars: MAX_MESSAGE_ID_CHARS });

const TOOL_STATES = [
  'input-streaming',
  'input-available',
  'approval-requested',
  'approval-responded',
  'output-available',
  'output-error',
  'output-denied',
];

/** What a tool part has besides its name: the transport reads `approval` of the last message. */
const toolFields: Readonly<Record<string, FieldCheck>> = {
  toolCallId: text,
  state: oneOfCheck(TOOL_STATES),
  approval: optional(
    shapeCheck({ id: text, approved: optional(booleanCheck), reason: optional(text) }),
  ),
};

/** The part types of the AI SDK's `UIMessage` (besides `tool-…` and `data-…`), and their fields. */
const PART_SHAPES: Readonly<Record<string, FieldCheck>> = {
  text: shapeCheck({ text }),
  reasoning: shapeCheck({ text }),
  file: shapeCheck({ mediaType: text, url: text, filename: optional(text) }),
  'source-url': shapeCheck({ sourceId: text, url: text }),
  'source-document': shapeCheck({ sourceId: text, mediaType: text, title: text }),
  'step-start': shapeCheck({}),
  'dynamic-tool': shapeCheck({ toolName: text, ...toolFields }),
};

const toolPartCheck = shapeCheck(toolFields);

/** One part: a type the SDK knows, with the fields of that type. */
const partCheck: FieldCheck = (value, field, code) => {
  if (!isRecord(value)) throw invalidField(field, 'a part object', code, { value });
  const { type } = value;
  if (typeof type !== 'string')
    throw invalidField(`${field}.type`, 'a part type', code, { value: type });
  const shape = Object.hasOwn(PART_SHAPES, type) ? PART_SHAPES[type] : undefined;
  if (shape) return shape(value, field, code);
  if (type.startsWith('tool-')) return toolPartCheck(value, field, code);
  if (type.startsWith('data-')) return;
  throw invalidField(
    `${field}.type`,
    `a part type of the AI SDK (${Object.keys(PART_SHAPES).join(', ')}, tool-…, data-…)`,
    code,
  );
};

const messageCheck = shapeCheck({
  id: messageIdCheck,
  role: oneOfCheck(['system', 'user', 'assistant']),
  parts: arrayCheck(partCheck),
});

/** A non-empty list of messages whose ids are unique. */
const messagesCheck: FieldCheck = (value, field, code) => {
  if (!Array.isArray(value) || value.length === 0)
    throw invalidField(field, 'a non-empty array of UI messages', code, { value });
  const ids = new Set<unknown>();
  for (const [index, message] of value.entries()) {
    messageCheck(message, `${field}[${index}]`, code);
    const { id } = message as { id: string };
    // Which stored turn a message is, is read from its id: two messages cannot share one.
    if (ids.has(id))
      throw invalidField(`${field}[${index}].id`, 'an id no other message of the chat has', code);
    ids.add(id);
  }
};

const requestCheck = shapeCheck(
  {
    chatId: idCheck,
    trigger: oneOfCheck(['submit-message', 'regenerate-message']),
    messageId: optional(messageIdCheck),
    messages: messagesCheck,
    abortSignal: optional(signalCheck),
  },
  '',
);

/** Checks a `sendMessages` request; a malformed one throws `invalid-input` naming the field. */
export function checkChatRequest<UI_MESSAGE extends UIMessage>(
  options: unknown,
): ChatRequest<UI_MESSAGE> {
  requestCheck(options, 'options', 'invalid-input');
  const { chatId, trigger, messageId, messages, abortSignal } = options as ChatRequest<UI_MESSAGE>;
  return { chatId, trigger, messageId, messages, abortSignal };
}

/** Checks the chat id of a `reconnectToStream` request. */
export function checkChatId(options: unknown): string {
  if (!isRecord(options))
    throw invalidField('options', 'an object', 'invalid-input', { value: options });
  idCheck(options.chatId, 'chatId', 'invalid-input');
  optional(signalCheck)(options.abortSignal, 'abortSignal', 'invalid-input');
  return options.chatId as string;
}

/** A message's text parts, joined as a run's input joins them. */
export function textOf(message: UIMessage): string {
  return message.parts
    .flatMap((part) => (part.type === 'text' ? [part.text] : []))
    .join('\n')
    .trim();
}

/**
 * A user message as a run's input: its text parts joined, and its file parts (what
 * `sendMessage({ text, files })` makes, with `data:` or `https:` URLs) as images and files,
 * which the agent checks and stores like any attachment. Text alone stays a string.
 */
export function userInput(message: UIMessage): RunInput {
  const joined = textOf(message);
  const files = message.parts.flatMap((part): RunInputPart[] => {
    if (part.type !== 'file') return [];
    return part.mediaType.startsWith('image/')
      ? [{ type: 'image', image: part.url, mediaType: part.mediaType }]
      : [
          {
            type: 'file',
            data: part.url,
            mediaType: part.mediaType,
            ...(part.filename ? { filename: part.filename } : {}),
          },
        ];
  });
  if (files.length === 0) return joined;
  return [...(joined ? [{ type: 'text' as const, text: joined }] : []), ...files];
}

/** An approval answer found in a message. */
export interface ApprovalAnswer {
  readonly id: string;
  readonly approved: boolean;
  readonly reason?: string;
}

/** The approval answers in a message: tool parts in state `approval-responded`. */
export function approvalAnswers(message: UIMessage): ApprovalAnswer[] {
  const answers: ApprovalAnswer[] = [];
  const seen = new Set<string>();
  for (const part of message.parts as readonly Record<string, unknown>[]) {
    const { state, approval } = part;
    if (state !== 'approval-responded' || !isRecord(approval)) continue;
    const { id, approved, reason } = approval;
    // An id given twice is answered once: the first answer counts.
    if (typeof id !== 'string' || typeof approved !== 'boolean' || seen.has(id)) continue;
    seen.add(id);
    answers.push({ id, approved, ...(typeof reason === 'string' ? { reason } : {}) });
  }
  return answers;
}
