/**
 * The agent worker asks the model to fold old messages into a running summary when a
 * conversation outgrows its history window. The offline model cannot summarise, so it
 * keeps the one thing that matters most to a reader: what the user asked.
 */
import type { ChatRequest } from './chat-request.js';

/** How Airlock's summary request begins (its system prompt). */
const SUMMARY_PROMPT = /^You keep a running summary of a conversation/;
/** The summary is bounded like a real model's would be (the prompt asks for 200 words). */
const MAX_QUESTIONS = 12;

/** Whether `request` is Airlock's request to update a conversation's summary. */
export function isSummaryRequest(request: ChatRequest): boolean {
  const system = request.messages[0];
  return system?.role === 'system' && SUMMARY_PROMPT.test(system.text);
}

/**
 * The new summary: the questions of the previous one and of the new messages, newest
 * last. The request's user message holds "Current summary:\n…\n\nNew messages:\n…".
 */
export function summariseConversation(request: ChatRequest): string {
  const text = request.messages.findLast((message) => message.role === 'user')?.text ?? '';
  const [previous = '', transcript = ''] = text.split(/\n\nNew messages:\n/);
  const earlier = /The user asked: (.*)$/s.exec(previous)?.[1]?.split(' | ') ?? [];
  const asked = transcript
    .split('\n')
    .filter((line) => line.startsWith('user: '))
    .map((line) => line.slice('user: '.length).trim());
  const questions = [...earlier, ...asked].filter(Boolean).slice(-MAX_QUESTIONS);
  return questions.length > 0 ? `The user asked: ${questions.join(' | ')}` : 'Nothing to note yet.';
}
