/**
 * Reads the content of a tool message. Airlock wraps each result in a labelled
 * `<tool_output tool="…" call_id="…" status="ok|error">` element (so a model reads it
 * as data) whose body is XML-escaped; other clients send the bare output. Either way the
 * output comes back.
 */

const ELEMENT = /^\s*<tool_output\b[^>]*>\n?([\s\S]*?)\n?<\/tool_output>\s*$/;

/** The output inside a `<tool_output>` element, with Airlock's encoding undone; other text as it is. */
export function unwrapToolOutput(content: string): string {
  const body = ELEMENT.exec(content)?.[1];
  if (body === undefined) return content;
  // Messages stored before the body was XML-escaped wrote a closing tag as `<\/tool_output`.
  return decodeXmlText(body.replace(/<\\\/(tool_output)/gi, '</$1'));
}

/** Undoes XML escaping: `&amp;`, `&lt;`, `&gt;`, `&quot;` and numeric character references. */
export function decodeXmlText(text: string): string {
  return text.replace(
    /&(amp|lt|gt|quot|#x[0-9a-f]{1,6}|#[0-9]{1,7});/gi,
    (entity, name: string) => {
      const named: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"' };
      const known = named[name.toLowerCase()];
      if (known !== undefined) return known;
      const hex = name[1] === 'x' || name[1] === 'X';
      const codePoint = Number.parseInt(name.slice(hex ? 2 : 1), hex ? 16 : 10);
      return codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : entity;
    },
  );
}
