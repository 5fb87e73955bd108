/**
 * Long messages in the log: a 50,000-character message would fill screens, pushing the
 * conversation out of sight, so it shows collapsed to its start, with a button that
 * shows it all (and collapses it again). The text is all there either way.
 */
import { createElement } from './dom';

/** Messages longer than this many characters are collapsed. */
export const COLLAPSE_CHARS = 2_000;
/** …and so are messages of more lines than this. */
const COLLAPSE_LINES = 24;

/** Whether `text` is long enough to show collapsed. */
export function isLongText(text: string): boolean {
  if (text.length > COLLAPSE_CHARS) return true;
  let lines = 1;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) {
    if (++lines > COLLAPSE_LINES) return true;
  }
  return false;
}

/**
 * `bubble` (its text already in), followed, when the text is long, by its "Show all"
 * button; the bubble then starts collapsed (`data-collapsed="true"`).
 */
export function collapsedIfLong(bubble: HTMLElement): HTMLElement[] {
  const text = bubble.textContent ?? '';
  if (!isLongText(text)) return [bubble];
  const showAll = `Show all (${text.length.toLocaleString('en')} characters)`;
  const button = createElement('button', {
    className: 'small secondary show-all',
    text: showAll,
    attributes: { type: 'button', 'aria-expanded': 'false' },
  });
  bubble.dataset.collapsed = 'true';
  button.addEventListener('click', () => {
    const collapse = bubble.dataset.collapsed !== 'true';
    bubble.dataset.collapsed = String(collapse);
    button.textContent = collapse ? showAll : 'Show less';
    button.setAttribute('aria-expanded', String(!collapse));
    if (collapse) bubble.scrollIntoView({ block: 'nearest' });
  });
  return [bubble, button];
}
