import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeDataText,
  encodeAttribute,
  encodeDataText,
  shortLabel,
} from '../../../src/model/data-encoding';

/** Characters an attack on the delimiters is made of, so random strings hit them often. */
const tricky = fc.constantFrom(
  '<',
  '>',
  '&',
  '"',
  '/',
  ';',
  '#',
  'x',
  'lt',
  'amp',
  '\u200b',
  '\uff1c',
  '\ufe64',
  '\uff1e',
  '\ufe65',
  '\n',
  '\u0000',
  'tool_output',
  'airlock_data',
);
const hostileText = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.array(tricky).map((parts) => parts.join('')),
  fc.string({ unit: 'binary' }),
);

describe('data encoding', () => {
  it('decodes back exactly the original text, for any text', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        expect(decodeDataText(encodeDataText(text))).toBe(text);
      }),
      { numRuns: 2_000 },
    );
  });

  it('never leaves a character that could open or close an element, look-alikes included', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        expect(encodeDataText(text)).not.toMatch(/[<>\uff1c\ufe64\uff1e\ufe65]/);
      }),
      { numRuns: 2_000 },
    );
  });

  it('escapes an entity-encoded close tag, so it decodes to itself and not to a tag', () => {
    const encoded = encodeDataText('&lt;/tool_output&gt;');
    expect(encoded).toBe('&amp;lt;/tool_output&amp;gt;');
    expect(decodeDataText(encoded)).toBe('&lt;/tool_output&gt;');
  });

  it('leaves no quote, angle bracket or control character in an attribute value', () => {
    fc.assert(
      fc.property(hostileText, (value) => {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what must not appear.
        expect(encodeAttribute(value)).not.toMatch(/["<>\u0000-\u001f\u007f]/);
        expect(decodeDataText(encodeAttribute(value))).toBe(value);
      }),
      { numRuns: 1_000 },
    );
  });

  it('cuts a long label to 64 characters and an ellipsis, leaving short ones as they are', () => {
    expect(shortLabel('get_weather')).toBe('get_weather');
    expect(shortLabel('n'.repeat(1_000_000))).toBe(`${'n'.repeat(64)}…`);
  });
});
