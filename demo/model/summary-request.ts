/**
 * The agent worker asks the model to fold old messages into a running summary when a
 * conversation outgrows its history window. The offline model cannot summarise, so it
 * keeps the one thing that matters most to a reader: what the user asked.
 */
import type { ChatRequest } from './chat-request.js';

/** How Airlock's summary request begins (its system prompt). */
const SUMMARY_PROMPT = /^You keep a running summary of a conversation/;
/**
 * The summary is bounded like a real model's would be (the prompt asks for at most 200
 * words): each question is cut to an excerpt, and only the newest that fit are kept.
 */
const MAX_QUESTION_CHARS = 120;
/** The longest summary the offline model writes. */
export const MAX_SUMMARY_CHARS = 1_000;
const PREFIX = 'The user asked: ';
const SEPARATOR = ' | ';

/** Whether `request` is Airlock's request to update a conversation's summary. */
export function isSummaryRequest(request: ChatRequest): boolean {
  const system = request.messages[0];
  return system?.role === 'system' && SUMMARY_PROMPT.test(system.text);
}

/**
 * The new summary: the questions of the previous one and of the new messages, newest
 * last, at most {@link MAX_SUMMARY_CHARS} long however long the history or its messages.
 * The request's user message holds "Current summary:\n…\n\nNew messages:\n…".
 */
export function summariseConversation(request: ChatRequest): string {
  const text = request.messages.findLast((message) => message.role === 'user')?.text ?? '';
  const [previous = '', transcript = ''] = text.split(/\n\nNew messages:\n/);
  const earlier = /The user asked: (.*)$/s.exec(previous)?.[1]?.split(SEPARATOR) ?? [];
  const asked = transcript
    .split('\n')
    .filter((line) => line.startsWith('user: '))
    .map((line) => line.slice('user: '.length));
  const questions = newestWithin(
    [...earlier, ...asked].map(questionExcerpt).filter(Boolean),
    MAX_SUMMARY_CHARS - PREFIX.length,
  );
  return questions.length > 0 ? `${PREFIX}${questions.join(SEPARATOR)}` : 'Nothing to note yet.';
}

/** A question on one line, cut to {@link MAX_QUESTION_CHARS} (its end marked with …). */
function questionExcerpt(question: string): string {
  const line = question.replace(/\s+/g, ' ').trim();
  return line.length <= MAX_QUESTION_CHARS ? line : `${line.slice(0, MAX_QUESTION_CHARS - 1)}…`;
}

/** The newest `questions` whose joined length stays within `chars`, oldest first. */
function newestWithin(questions: readonly string[], chars: number): string[] {
  const kept: string[] = [];
  let length = 0;
  for (let index = questions.length - 1; index >= 0; index -= 1) {
    const question = questions[index] as string;
    const added = question.length + (kept.length > 0 ? SEPARATOR.length : 0);
    if (length + added > chars) break;
    kept.push(question);
    length += added;
  }
  return kept.reverse();
}
