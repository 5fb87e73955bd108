import { randomId } from '../runtime/random-id';
import type { ModelStreamPart } from './chat-model';

type Part = ModelStreamPart;

/** A call whose start was reported while its block is still streaming. */
interface OpenCall {
  readonly index: number;
  readonly id: string;
  readonly name: string;
}

/** The name at the head of a block, `{"tool": "name"`, seen as soon as it has streamed. */
const NAME_AT_HEAD = /^\s*\{\s*"tool"\s*:\s*"([^"\\]*)"/;
/** The name anywhere in a block that is not valid JSON. */
const NAME_ANYWHERE = /"tool"\s*:\s*"([^"\\]*)"/;
/** Where a block that is not JSON starts its arguments. */
const ARGUMENTS_ANYWHERE = /"arguments"\s*:\s*/;
/** A closing fence: three backticks at the start of a line. */
const CLOSING_FENCE = /(?:^|\n)[ \t]*```/;

/**
 * Reads tool calls out of streamed answer text, for models prompted to call tools with
 * fenced blocks (```json {"tool": name, "arguments": {...}} ```). Text outside the blocks
 * is passed on as text deltas, as it streams; a block is held until it closes, then
 * becomes a tool call (its start reported as soon as its name has streamed). A block
 * without a `"tool"` key is ordinary answer text (an answer may show JSON); one that has
 * the key but is not valid JSON becomes a call whose arguments are the text after its
 * `"arguments":` (or the block as written), for the tool pipeline to mend if it can and
 * answer with `tool-invalid-json` if not.
 */
export class ToolBlockParser {
  readonly #newId: () => string;
  #state: 'text' | 'block' | 'foreign' = 'text';
  /** Text received and not yet handled. */
  #pending = '';
  /** Whitespace outside blocks, held until it is known not to separate two blocks. */
  #heldWhitespace = '';
  /** The current block: the whitespace and fence line before it, and its content so far. */
  #fence = '';
  #block = '';
  #call: OpenCall | undefined;
  #calls = 0;
  #lastWasBlock = false;
  /** Inside a foreign code block, part of the current line was passed on already. */
  #midLine = false;

  constructor(newId: () => string = () => randomId('call')) {
    this.#newId = newId;
  }

  /** How many tool calls were read so far. */
  get callCount(): number {
    return this.#calls;
  }

  /** Takes the next piece of streamed text; returns the parts it completes. */
  push(delta: string): Part[] {
    const parts: Part[] = [];
    this.#pending += delta;
    this.#drain(parts, false);
    return parts;
  }

  /** The stream ended: whatever is held is settled (an unclosed block counts as closed). */
  end(): Part[] {
    const parts: Part[] = [];
    this.#drain(parts, true);
    if (this.#state === 'block') this.#closeBlock(this.#block, parts);
    this.#state = 'text';
    if (this.#heldWhitespace && !this.#lastWasBlock) {
      parts.push({ type: 'text-delta', delta: this.#heldWhitespace });
    }
    this.#heldWhitespace = '';
    return parts;
  }

  #drain(parts: Part[], final: boolean): void {
    for (;;) {
      if (this.#state === 'block') {
        this.#block += this.#pending;
        this.#pending = '';
        this.#announce(parts);
        const close = CLOSING_FENCE.exec(this.#block);
        if (!close) return;
        const content = this.#block.slice(0, close.index);
        this.#pending = this.#block.slice(close.index + close[0].length);
        this.#closeBlock(content, parts);
        this.#state = 'text';
        continue;
      }
      if (this.#state === 'foreign') {
        if (!this.#drainForeign(parts, final)) return;
        continue;
      }
      const fence = this.#pending.indexOf('```');
      if (fence === -1) {
        // One or two backticks at the end may be the start of a fence: hold them.
        const keep = final ? 0 : (/`{1,2}$/.exec(this.#pending)?.[0].length ?? 0);
        this.#text(this.#pending.slice(0, this.#pending.length - keep), parts);
        this.#pending = this.#pending.slice(this.#pending.length - keep);
        return;
      }
      this.#text(this.#pending.slice(0, fence), parts);
      const rest = this.#pending.slice(fence);
      const lineEnd = rest.indexOf('\n');
      if (lineEnd === -1) {
        // The fence's language is not known yet.
        if (final) this.#text(rest, parts);
        this.#pending = final ? '' : rest;
        return;
      }
      const fenceLine = rest.slice(0, lineEnd + 1);
      this.#pending = rest.slice(lineEnd + 1);
      const language = fenceLine.slice(3).trim().toLowerCase();
      if (language === 'json' || language === '') {
        this.#state = 'block';
        this.#fence = this.#heldWhitespace + fenceLine;
        this.#heldWhitespace = '';
        this.#block = '';
        this.#call = undefined;
      } else {
        this.#text(fenceLine, parts);
        this.#state = 'foreign';
        this.#midLine = false;
      }
    }
  }

  /**
   * Passes a code block of another language on line by line, until its closing fence (at
   * the start of a line; backticks inside a line are code). Returns true when it closed.
   */
  #drainForeign(parts: Part[], final: boolean): boolean {
    for (;;) {
      const lineEnd = this.#pending.indexOf('\n');
      const line = lineEnd === -1 ? this.#pending : this.#pending.slice(0, lineEnd + 1);
      const lead = line.trimStart();
      if (!this.#midLine && lead.startsWith('```')) {
        const close = line.indexOf('```') + 3;
        this.#text(this.#pending.slice(0, close), parts);
        this.#pending = this.#pending.slice(close);
        this.#state = 'text';
        return true;
      }
      if (lineEnd === -1) {
        // The start of a line that may still become the closing fence waits for more.
        if (!final && !this.#midLine && '```'.startsWith(lead)) return false;
        this.#text(line, parts);
        this.#pending = '';
        this.#midLine = line !== '' || this.#midLine;
        return false;
      }
      this.#text(line, parts);
      this.#pending = this.#pending.slice(lineEnd + 1);
      this.#midLine = false;
    }
  }

  /** Reports a call's start as soon as its name has streamed at the head of the block. */
  #announce(parts: Part[]): void {
    if (this.#call) return;
    const name = NAME_AT_HEAD.exec(this.#block)?.[1];
    if (name === undefined) return;
    this.#call = { index: this.#calls++, id: this.#newId(), name };
    parts.push({
      type: 'tool-call-delta',
      index: this.#call.index,
      id: this.#call.id,
      name,
      argumentsDelta: '',
    });
  }

  #closeBlock(content: string, parts: Part[]): void {
    const call = readCall(content);
    const name = this.#call?.name ?? call?.name;
    if (name === undefined) {
      // Not a tool call: the block is part of the answer, fences and all.
      this.#text(`${this.#fence}${content}${content.endsWith('\n') ? '' : '\n'}\`\`\``, parts);
      return;
    }
    const open = this.#call ?? { index: this.#calls++, id: this.#newId(), name };
    parts.push({
      type: 'tool-call-delta',
      index: open.index,
      ...(this.#call ? {} : { id: open.id, name }),
      argumentsDelta: call?.argumentsText ?? content,
    });
    this.#call = undefined;
    this.#lastWasBlock = true;
  }

  /**
   * Passes answer text on, holding trailing whitespace until more text comes: whitespace
   * that only separates blocks is dropped, however the stream happened to be split.
   */
  #text(text: string, parts: Part[]): void {
    if (text === '') return;
    const combined = this.#heldWhitespace + text;
    const body = combined.trimEnd();
    this.#heldWhitespace = combined.slice(body.length);
    if (body === '') return;
    this.#lastWasBlock = false;
    parts.push({ type: 'text-delta', delta: body });
  }
}

/**
 * The call a block's content makes: its name and its arguments as JSON text. A block that
 * is valid JSON without a `"tool"` string is no call; one that is not JSON but names a
 * tool is a call whose arguments are what follows `"arguments":` (an unclosed brace there
 * is mended later), else the block as written (`argumentsText` undefined).
 */
function readCall(content: string): { name: string; argumentsText?: string } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    const name = NAME_ANYWHERE.exec(content)?.[1];
    if (name === undefined) return undefined;
    const args = ARGUMENTS_ANYWHERE.exec(content);
    return args ? { name, argumentsText: content.slice(args.index + args[0].length) } : { name };
  }
  if (typeof parsed !== 'object' || parsed === null || !('tool' in parsed)) return undefined;
  const { tool, arguments: args } = parsed as { tool: unknown; arguments?: unknown };
  if (typeof tool !== 'string') return undefined;
  return { name: tool, argumentsText: argumentsText(args) };
}

/** Arguments as JSON text; some models encode them as a JSON string, which is unwrapped. */
function argumentsText(args: unknown): string {
  if (args === undefined) return '{}';
  if (typeof args === 'string') {
    try {
      const inner: unknown = JSON.parse(args);
      if (typeof inner === 'object' && inner !== null) return args;
    } catch {
      // Not JSON inside: the string itself is the (wrong) arguments, for the schema to reject.
    }
  }
  return JSON.stringify(args);
}
