import { installModelContext, type ModelContext } from 'airlock-agents/webmcp';
import { expect, onTestFinished } from 'vitest';

/** A fresh same-origin frame, removed when the test ends: tests never share registered tools. */
export function freshFrame(): Window {
  const frame = document.createElement('iframe');
  document.body.append(frame);
  onTestFinished(() => frame.remove());
  const win = frame.contentWindow;
  if (!win) throw new Error('The frame has no window.');
  return win;
}

/** The polyfill's `document.modelContext` in `win` (a fresh frame by default). */
export function freshContext(win: Window = freshFrame()): ModelContext {
  const installed = installModelContext(win);
  if (!installed) throw new Error('Not a secure context.');
  expect(installed.native).toBe(false);
  return installed.modelContext;
}

/** What `promise` rejected with; throws when it fulfils. */
export async function rejection(
  promise: Promise<unknown>,
): Promise<{ name: string; message: string }> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error as { name: string; message: string },
  );
  if (!outcome) throw new Error('It did not reject.');
  return outcome;
}
