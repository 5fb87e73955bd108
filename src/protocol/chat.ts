/**
 * Chat messages as the Chat Completions protocol spells them. They are what the run
 * keeps as history and what is replayed to the model, so they stay in the wire shape.
 */

/** A tool call the assistant made. `arguments` is the JSON text exactly as the model produced it. */
export interface ChatToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

/**
 * A reasoning item of the Responses API as kept in the history: its id, its summary texts
 * and the opaque `encrypted_content` the server decrypts when the item is sent back.
 */
export interface ReasoningItem {
  readonly id: string;
  readonly summary: readonly string[];
  readonly encryptedContent: string;
}

/** How closely the model looks at an image (Chat Completions' `detail`). */
export type ImageDetail = 'auto' | 'low' | 'high';

/**
 * An attachment kept in the agent's store: the SHA-256 of its bytes (lowercase hex, the
 * key it is stored under, once however often it is sent), its media type and byte size.
 */
export interface AttachmentRef {
  readonly hash: string;
  readonly mediaType: string;
  readonly size: number;
}

/**
 * One part of a user message with attachments. A stored message holds references
 * (`attachment`), never bytes; the context sent to the model holds the bytes as a data URL
 * (`url` of an image, `data` of a file), read from the store when the context is built.
 */
export type UserContentPart =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image'; readonly attachment: AttachmentRef; readonly detail?: ImageDetail }
  /** An image the model fetches itself (`https:`), or a stored one resolved to a data URL. */
  | { readonly type: 'image'; readonly url: string; readonly detail?: ImageDetail }
  | { readonly type: 'file'; readonly attachment: AttachmentRef; readonly filename: string }
  /** A stored file resolved for the model: `data` is a data URL. */
  | { readonly type: 'file'; readonly data: string; readonly filename: string };

/** One message of a conversation, in the Chat Completions shape. */
export type ChatMessage =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string | readonly UserContentPart[] }
  | {
      readonly role: 'assistant';
      readonly content: string | null;
      readonly tool_calls?: readonly ChatToolCall[];
      /**
       * What the model streamed as its reasoning (a summary, or the raw thinking of an
       * open model), kept to show later. Never sent back as content.
       */
      readonly reasoning?: string;
      /**
       * The Responses API's reasoning items, encrypted by the server, sent back with the
       * message in later requests as that API requires when nothing is stored upstream.
       */
      readonly reasoningItems?: readonly ReasoningItem[];
    }
  | { readonly role: 'tool'; readonly tool_call_id: string; readonly content: string };

/** Token counts for one model call or a whole run. */
export interface Usage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
  /** True when the server reported no usage and (some of) the counts are estimated at 4 characters a token. */
  readonly estimated?: boolean;
}

/** Why the model stopped a response; `null` when the stream ended without saying. */
export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | null;

/** What the model is sent in place of an attachment whose bytes are not in the store. */
export const MISSING_ATTACHMENT = '[an attachment that is no longer stored]';
