// A retry of a refused turn (`agent.retryRefused`): the request parsed, the turn found and
// checked, and the input the new run starts from (the turn's stored one, or the one given in
// its place). Loaded with the first retry: most agents never retry a refused turn.
import { z } from 'zod/mini';
import { AirlockError } from '../../errors/airlock-error';
import type { RunLimits } from '../../protocol/agent-config';
import type { ChatMessage } from '../../protocol/chat';
import type { RetryRequest } from '../../protocol/wire';
import { turnNotRefused } from '../../store/rules/refused-turns';
import type { ConversationStore, MessageRecord } from '../../store/store';
import { checkRow } from '../context/stored-rows';
import { type RunInput, readRunInput } from '../run/run-input';
import type { AgentSetup, RunStart } from '../run/run-setup';
import { id, parseRunRequest, runInput, runRequestSchema } from './request-schema';

type RetryStore = Pick<ConversationStore, 'getRun' | 'listMessages'>;

/** A retry's request: a run's, with `retryOf` naming the refused run and `input` optional. */
const retryRequestSchema = z.extend(runRequestSchema, {
  input: z.exactOptional(runInput),
  retryOf: id,
});

/** A retry, parsed and checked: its request, its input, and what its run's start adds. */
export interface OpenedRetry {
  readonly request: RetryRequest;
  readonly read: RunInput;
  readonly start: Pick<RunStart, 'replacesRefused' | 'claim'>;
}

/**
 * Parses a retry's request (a bad `retryOf` or `input` is `invalid-input`, anything else
 * `invalid-options`), finds its refused turn (`turn-not-refused` when there is none) and
 * reads its input, before anything is stored or sent. The run's start then replaces the turn
 * in its input's own write, after checking again under the conversation's lock that the turn
 * is still there: one dropped or retried meanwhile is not replaced twice.
 */
export async function openRetry(
  setup: Pick<AgentSetup, 'store'>,
  untrusted: unknown,
  limits: RunLimits,
): Promise<OpenedRetry> {
  const { store } = setup;
  const request = parseRunRequest<RetryRequest>(
    untrusted,
    limits.maxInputChars,
    retryRequestSchema,
  );
  const { conversationId, retryOf } = request;
  const turn = await refusedTurn(store, conversationId, retryOf);
  const read =
    request.input === undefined
      ? storedInput(turn, retryOf)
      : await readRunInput(request.input, limits);
  return {
    request,
    read,
    start: {
      replacesRefused: retryOf,
      claim: async () => {
        await refusedTurn(store, conversationId, retryOf);
      },
    },
  };
}

/**
 * The messages of run `runId`'s refused turn in the conversation, oldest first, as stored
 * now. Throws `turn-not-refused` for a run that is unknown, of another conversation, not
 * refused, or whose turn was dropped or replaced already.
 */
async function refusedTurn(
  store: RetryStore,
  conversationId: string,
  runId: string,
): Promise<MessageRecord[]> {
  const [run, rows] = await Promise.all([store.getRun(runId), store.listMessages(conversationId)]);
  if (run === undefined) throw turnNotRefused(conversationId, runId, 'unknown-run');
  // The run row is another writer's data: only its conversation is read, compared as given.
  if (run.conversationId !== conversationId)
    throw turnNotRefused(conversationId, runId, 'other-conversation');
  const own = rows.filter((row) => row.runId === runId);
  if (own.length === 0) throw turnNotRefused(conversationId, runId, 'dropped');
  if (own.some((row) => row.status !== 'refused'))
    throw turnNotRefused(conversationId, runId, 'not-refused');
  return own;
}

/**
 * The turn's stored input (its first message), checked as a stored row. Its attachments are
 * the conversation's already: the context reads their bytes from the store.
 */
function storedInput(turn: readonly MessageRecord[], runId: string): RunInput {
  const first = checkRow('messages', turn[0], 'a retry').row?.message;
  if (first?.role !== 'user')
    throw new AirlockError(
      'invalid-input',
      `The refused turn of run "${runId}" has no stored input that can be read: give \`input\` to retry it.`,
      { details: { field: 'input' } },
    );
  return { message: first, text: textOf(first), attachments: [] };
}

/** A user message's text: its text parts, joined as a run's input joins them. */
function textOf(message: Extract<ChatMessage, { role: 'user' }>): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}
