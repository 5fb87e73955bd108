import { estimateTokenCount } from 'tokenx';
import type { ChatMessage, UserContentPart } from '../protocol/chat';
import type { ToolDescriptor } from '../protocol/tools';
import type { ModelRequest } from './chat-model';

// The one token estimate: the history window, the rate limiter and budgets (for a server
// that reports no usage) all count with it. `tokenx` prices text by script (a Chinese
// character is about a token, an English word about one), where a flat four characters a
// token undercounts Chinese, Japanese and Korean several-fold.

/** Tokens a message costs beyond its text (role and separators), as chat formats add them. */
const MESSAGE_OVERHEAD_TOKENS = 3;

/**
 * What an image or a file counts as: models bill images by their pixels, not their bytes
 * (a high-detail 1024×1024 image is 765 tokens to OpenAI's models, a page of a PDF more),
 * so a data URL's base64 is never counted as text; a round figure keeps windowing simple.
 */
export const ATTACHMENT_TOKENS = 1_000;

/** An estimate of the tokens of some text. */
export function estimateTextTokens(text: string): number {
  return text ? estimateTokenCount(text) : 0;
}

/**
 * Messages are estimated once: a run's history is the same objects at every step, and
 * `estimateTokenCount` walks the whole text (about 10 ms for 100 000 characters).
 */
const messageTokens = new WeakMap<ChatMessage, number>();

/**
 * An estimate of a message's tokens: its text plus the names and arguments of its tool
 * calls, plus the few tokens every message costs. Stored with each message (as
 * `approxTokens`) so that choosing the history window never re-measures the history.
 */
export function estimateMessageTokens(message: ChatMessage): number {
  const known = messageTokens.get(message);
  if (known !== undefined) return known;
  let tokens = MESSAGE_OVERHEAD_TOKENS + estimateContentTokens(message.content);
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      tokens +=
        estimateTextTokens(call.function.name) + estimateTextTokens(call.function.arguments);
    }
  }
  messageTokens.set(message, tokens);
  return tokens;
}

function estimateContentTokens(content: string | readonly UserContentPart[] | null): number {
  if (typeof content === 'string') return estimateTextTokens(content);
  let tokens = 0;
  for (const part of content ?? [])
    tokens += part.type === 'text' ? estimateTextTokens(part.text) : ATTACHMENT_TOKENS;
  return tokens;
}

/**
 * Tools are estimated once per descriptor (the agent's tools and the built-in ones keep
 * theirs for the worker's life), their parameters once per schema object (a run's own
 * tools come with new descriptors each run).
 */
const toolTokens = new WeakMap<ToolDescriptor, number>();
const parameterTokens = new WeakMap<ToolDescriptor['parameters'], number>();

/** An estimate of a tool's definition as the model is sent it: its name, description and parameters. */
function estimateToolTokens(tool: ToolDescriptor): number {
  const known = toolTokens.get(tool);
  if (known !== undefined) return known;
  const { name, description, parameters } = tool;
  let tokens = parameterTokens.get(parameters);
  if (tokens === undefined) {
    tokens = estimateTextTokens(JSON.stringify(parameters));
    parameterTokens.set(parameters, tokens);
  }
  tokens += MESSAGE_OVERHEAD_TOKENS + estimateTextTokens(name) + estimateTextTokens(description);
  toolTokens.set(tool, tokens);
  return tokens;
}

/** An estimate of the prompt tokens of a request: its messages and its tool definitions. */
export function estimateRequestTokens(request: ModelRequest): number {
  let tokens = 0;
  for (const tool of request.tools) tokens += estimateToolTokens(tool);
  for (const message of request.messages) tokens += estimateMessageTokens(message);
  return tokens;
}

/** Requests estimated below this many tokens do not calibrate: their counts are mostly overhead. */
const MIN_CALIBRATION_TOKENS = 64;

/** How far one report moves the factor: enough to learn in a few calls, not to swing on one. */
const CALIBRATION_WEIGHT = 0.3;

/** The factor stays within these bounds, however odd a server's counts are. */
const MIN_FACTOR = 0.25;
const MAX_FACTOR = 4;

/**
 * Corrects the estimate for the agent's model from the prompt tokens its server reports:
 * the factor is a running average of reported / estimated, so a tokenizer that counts
 * differently (or a language `tokenx` prices wrongly) is learnt after a few calls. One per
 * agent; it starts at 1 and lives as long as the agent worker.
 */
export class TokenCalibration {
  #factor = 1;

  /** Reported / estimated prompt tokens, averaged over the calls so far (1 before any). */
  get factor(): number {
    return this.#factor;
  }

  /** Learns from a call whose server reported its prompt tokens. */
  observe(estimatedPromptTokens: number, reportedPromptTokens: number): void {
    if (estimatedPromptTokens < MIN_CALIBRATION_TOKENS || !(reportedPromptTokens > 0)) return;
    const ratio = clamp(reportedPromptTokens / estimatedPromptTokens);
    this.#factor = clamp(this.#factor + CALIBRATION_WEIGHT * (ratio - this.#factor));
  }

  /** An estimate corrected by the factor. */
  scale(estimatedTokens: number): number {
    return Math.ceil(estimatedTokens * this.#factor);
  }
}

function clamp(factor: number): number {
  return Math.min(MAX_FACTOR, Math.max(MIN_FACTOR, factor));
}
