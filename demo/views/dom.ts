/** Small DOM helpers for the demo page, which uses no framework. */

/** What {@link createElement} can set besides the tag. */
export interface ElementOptions {
  readonly className?: string;
  readonly text?: string;
  readonly attributes?: Readonly<Record<string, string>>;
}

/** Creates an element with a class, text content, attributes and children. */
export function createElement<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  options: ElementOptions = {},
  ...children: readonly Node[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (options.className !== undefined) element.className = options.className;
  if (options.text !== undefined) element.textContent = options.text;
  for (const [name, value] of Object.entries(options.attributes ?? {})) {
    element.setAttribute(name, value);
  }
  element.append(...children);
  return element;
}

/**
 * A small `type="button"` button (a form's Enter never presses it); `secondary` draws it
 * quieter, and `attributes` adds an `aria-label` or the like.
 */
export function createSmallButton(
  text: string,
  options: {
    readonly secondary?: boolean;
    readonly attributes?: Readonly<Record<string, string>>;
  } = {},
): HTMLButtonElement {
  return createElement('button', {
    className: options.secondary ? 'small secondary' : 'small',
    text,
    attributes: { type: 'button', ...options.attributes },
  });
}

/** The element with `id`, checked to be of the expected kind: a missing one is a bug in index.html. */
export function requireElement<T extends HTMLElement>(
  id: string,
  kind: new (...args: never[]) => T,
): T {
  const element = document.getElementById(id);
  if (!(element instanceof kind)) {
    throw new Error(`index.html has no ${kind.name} with id "${id}".`);
  }
  return element;
}

/** Values whose JSON is longer than this are indented; shorter ones read better on one line. */
const ONE_LINE_JSON = 100;

/** A value as readable text: strings as they are, anything else as JSON. */
export function formatValue(value: unknown): string {
  if (typeof value === 'string') return value;
  const oneLine = JSON.stringify(value) ?? String(value);
  return oneLine.length <= ONE_LINE_JSON ? oneLine : JSON.stringify(value, null, 2);
}

/** A duration in milliseconds, rounded for people. */
export function formatDuration(durationMs: number): string {
  return durationMs < 1000 ? `${Math.round(durationMs)} ms` : `${(durationMs / 1000).toFixed(1)} s`;
}
