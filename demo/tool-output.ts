/**
 * Reads the content of a tool message. Airlock wraps each result in a labelled
 * `<tool_output tool="…" call_id="…" status="ok|error">` element (so a model reads it
 * as data); other clients send the bare output. Either way the output comes back.
 */

const ELEMENT = /^\s*<tool_output\b[^>]*>\n?([\s\S]*?)\n?<\/tool_output>\s*$/;

/** The output inside a `<tool_output>` element, with Airlock's escaping undone; other text as it is. */
export function unwrapToolOutput(content: string): string {
  const body = ELEMENT.exec(content)?.[1];
  // Airlock escapes a closing tag inside the output as `<\/tool_output`.
  return body === undefined ? content : body.replace(/<\\\/(tool_output)/gi, '</$1');
}
