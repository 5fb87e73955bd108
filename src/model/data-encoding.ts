/**
 * How untrusted text (tool output, stored memories and summaries, knowledge chunks) is
 * written into the delimited elements the model reads as data. The encoding is XML's,
 * which models know: inside an element no character of the data can open or close a tag,
 * so the text cannot end its element early and speak outside it, whatever it holds.
 */

/**
 * Characters a model could read as a tag's angle brackets: the ASCII ones and their
 * full-width and small-form look-alikes (U+FF1C, U+FE64, U+FF1E, U+FE65), which some
 * tokenizers fold into `<` and `>`.
 */
const TEXT_SPECIALS = /[&<>\uff1c\ufe64\uff1e\ufe65]/g;

/** In attribute values, also quotes (which end the value) and control characters (newlines start lines). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this matches.
const ATTRIBUTE_SPECIALS = /[&<>"'\u0000-\u001f\u007f\uff1c\ufe64\uff1e\ufe65]/g;

const NAMED: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** The entities `decodeDataText` undoes: the named ones above and numeric references. */
const ENTITY = /&(amp|lt|gt|#x[0-9a-fA-F]{1,6}|#[0-9]{1,7});/g;

/** The longest model-chosen label (a tool name, a call id) written into an attribute. */
export const MAX_LABEL_CHARS = 64;

function reference(char: string): string {
  return NAMED[char] ?? `&#x${(char.codePointAt(0) ?? 0).toString(16).toUpperCase()};`;
}

/**
 * Encodes text for the body of a data element: `&`, `<`, `>` and the angle-bracket
 * look-alikes become character references. `decodeDataText` gives back exactly the text.
 */
export function encodeDataText(text: string): string {
  return text.replace(TEXT_SPECIALS, reference);
}

/** Encodes an attribute value: as `encodeDataText`, and quotes and control characters too. */
export function encodeAttribute(value: string): string {
  return value.replace(ATTRIBUTE_SPECIALS, reference);
}

/** The text an encoded body or attribute value stands for (the inverse of both encoders). */
export function decodeDataText(encoded: string): string {
  return encoded.replace(ENTITY, (entity, name: string) => {
    if (name === 'amp') return '&';
    if (name === 'lt') return '<';
    if (name === 'gt') return '>';
    const hex = name.startsWith('#x');
    const codePoint = Number.parseInt(name.slice(hex ? 2 : 1), hex ? 16 : 10);
    // Not a character: left as written (the encoders never produce one).
    return codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : entity;
  });
}

/**
 * A label chosen by someone else (the model names tools and call ids) cut to
 * `MAX_LABEL_CHARS` and an ellipsis: a model can send a megabyte of name.
 */
export function shortLabel(value: string, maxChars = MAX_LABEL_CHARS): string {
  return value.length > maxChars ? `${value.slice(0, maxChars)}…` : value;
}

/**
 * An element whose attributes are encoded and whose body is `markup`: text already
 * encoded with `encodeDataText`, or elements built with this function. The body sits on
 * lines of its own.
 */
export function dataElement(
  name: string,
  attributes: Readonly<Record<string, string>>,
  markup: string,
): string {
  const labels = Object.entries(attributes)
    .map(([key, value]) => ` ${key}="${encodeAttribute(value)}"`)
    .join('');
  return `<${name}${labels}>\n${markup}\n</${name}>`;
}
