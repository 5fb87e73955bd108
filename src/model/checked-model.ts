import { AirlockError, isAirlockError } from '../errors/airlock-error';
import { isRecord } from '../errors/field-checks';
import type { ChatModel, ModelCallOptions, ModelRequest, ModelStreamPart } from './chat-model';

const FINISH_REASONS = ['stop', 'length', 'tool_calls', 'content_filter'];

/**
 * A model of the app's own (`serveAgent({ model })`), held to the contract the loop relies
 * on: every part it streams is checked (a malformed one fails `model-stream-malformed`), and
 * anything it throws that is not an `AirlockError` fails `model-failed`, its message kept.
 */
export function checkedModel(model: ChatModel): ChatModel {
  const name = typeof model.name === 'string' && model.name ? model.name : 'custom';
  return {
    name,
    async *stream(
      request: ModelRequest,
      options: ModelCallOptions,
    ): AsyncIterable<ModelStreamPart> {
      try {
        for await (const part of model.stream(request, options)) yield checkedPart(part);
      } catch (error) {
        throw asAirlockError(error, name);
      }
    },
    async complete(request, options) {
      try {
        const answer: unknown = await model.complete(request, options);
        if (!isRecord(answer) || typeof answer.text !== 'string' || !isUsage(answer.usage))
          throw new AirlockError(
            'model-stream-malformed',
            `Model "${name}" answered complete() with something other than { text, usage }.`,
          );
        return { text: answer.text, usage: answer.usage };
      } catch (error) {
        throw asAirlockError(error, name);
      }
    },
  };
}

/** `part` as the loop reads it, or `model-stream-malformed` (also what `chatModelConformance` checks). */
export function checkedPart(part: unknown): ModelStreamPart {
  if (isRecord(part)) {
    switch (part.type) {
      case 'text-delta':
        if (typeof part.delta === 'string') return { type: 'text-delta', delta: part.delta };
        break;
      case 'tool-call-delta':
        if (
          Number.isInteger(part.index) &&
          (part.index as number) >= 0 &&
          (part.index as number) < 1_000 &&
          typeof part.argumentsDelta === 'string' &&
          (part.id === undefined || typeof part.id === 'string') &&
          (part.name === undefined || typeof part.name === 'string')
        )
          return {
            type: 'tool-call-delta',
            index: part.index as number,
            argumentsDelta: part.argumentsDelta,
            ...(part.id === undefined ? {} : { id: part.id as string }),
            ...(part.name === undefined ? {} : { name: part.name as string }),
          };
        break;
      case 'reasoning-delta':
        if (typeof part.delta === 'string') return { type: 'reasoning-delta', delta: part.delta };
        break;
      case 'reasoning-item': {
        // The built-in model streams these too, when an app puts it in a route of its own.
        const item = part.item;
        if (
          isRecord(item) &&
          typeof item.id === 'string' &&
          typeof item.encryptedContent === 'string' &&
          Array.isArray(item.summary) &&
          item.summary.every((line) => typeof line === 'string')
        )
          return {
            type: 'reasoning-item',
            item: {
              id: item.id,
              summary: [...(item.summary as string[])],
              encryptedContent: item.encryptedContent,
            },
          };
        break;
      }
      case 'finish':
        if (typeof part.finishReason === 'string' && FINISH_REASONS.includes(part.finishReason))
          return {
            type: 'finish',
            finishReason: part.finishReason as Extract<
              ModelStreamPart,
              { type: 'finish' }
            >['finishReason'],
          };
        break;
      case 'usage':
        if (isUsage(part.usage)) return { type: 'usage', usage: part.usage };
        break;
    }
  }
  throw new AirlockError(
    'model-stream-malformed',
    `The model streamed a part that is not one the loop knows: ${describe(part)}.`,
  );
}

function isUsage(value: unknown): value is Extract<ModelStreamPart, { type: 'usage' }>['usage'] {
  const count = (item: unknown) => typeof item === 'number' && Number.isFinite(item) && item >= 0;
  return (
    isRecord(value) &&
    count(value.promptTokens) &&
    count(value.completionTokens) &&
    count(value.totalTokens)
  );
}

function asAirlockError(error: unknown, name: string): AirlockError {
  if (isAirlockError(error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new AirlockError('model-failed', `Model "${name}" failed: ${reason}`, { cause: error });
}

/** A short account of a bad part, without echoing its content (it may be long or private). */
function describe(part: unknown): string {
  if (!isRecord(part)) return part === null ? 'null' : typeof part;
  return typeof part.type === 'string'
    ? `a "${part.type.slice(0, 40)}" part with wrong fields`
    : 'an object without a type';
}
