/**
 * A model's reasoning in the conversation log: a collapsed "Thinking" block above the
 * step's answer, open to read, that grows as `reasoning-delta` events arrive.
 */
import { createElement } from './dom';

/** A thinking block and the way to add to it. */
export interface ThinkingBlock {
  readonly element: HTMLDetailsElement;
  append(delta: string): void;
}

/** Creates a thinking block holding `text` (more may be appended). */
export function createThinkingBlock(text = ''): ThinkingBlock {
  const content = createElement('p', { className: 'thinking-text', text });
  const element = createElement(
    'details',
    { className: 'thinking' },
    createElement('summary', { text: 'Thinking' }),
    content,
  );
  return {
    element,
    append(delta) {
      content.textContent += delta;
    },
  };
}
