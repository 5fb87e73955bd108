import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRedactor, createSecretsRedactor, REDACTED } from '../../../src/proxy/redact-key';

const KEY_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-';

/** A key as providers make them: `sk-` and 20 to 60 key characters. */
const keyArbitrary = fc
  .array(fc.constantFrom(...KEY_CHARS), { minLength: 20, maxLength: 60 })
  .map((chars) => `sk-${chars.join('')}`);

/** `char` as a JSON `\u` escape, its hex digits in the case each flag says. */
function escapeOf(char: string, upper: readonly boolean[]): string {
  const hex = char.charCodeAt(0).toString(16).padStart(4, '0');
  return `\\u${[...hex].map((digit, index) => (upper[index] ? digit.toUpperCase() : digit)).join('')}`;
}

/** A key written into JSON text with some of its characters escaped: which, and in what case, drawn. */
const escapedKeyArbitrary = keyArbitrary.chain((key) =>
  fc
    .array(fc.tuple(fc.boolean(), fc.array(fc.boolean(), { minLength: 4, maxLength: 4 })), {
      minLength: key.length,
      maxLength: key.length,
    })
    .map((choices) => ({
      key,
      written: [...key]
        .map((char, index) => {
          const [escaped, upper] = choices[index] ?? [false, []];
          return escaped ? escapeOf(char, upper) : char;
        })
        .join(''),
    })),
);

describe('the key redactor over JSON escapes', () => {
  it('blanks the key with one character escaped, in lower- or upper-case hex', () => {
    const key = 'sk-abcdefghijklmnopqrstuvwxyz012345';
    const redact = createRedactor(key);
    for (const written of [
      'sk-\\u0061bcdefghijklmnopqrstuvwxyz012345',
      'sk-abcdefghi\\u006Aklmnopqrstuvwxyz012345',
      'sk-abcdefghi\\u006aklmnopqrstuvwxyz012345',
      '\\u0073\\u006B\\u002d\\u0061bcdefghijklmnopqrstuvwxyz01234\\u0035',
    ]) {
      const body = `{"error":{"message":"Incorrect API key provided: ${written}."}}`;
      const redacted = redact(body);
      expect(redacted, written).toBe(
        `{"error":{"message":"Incorrect API key provided: ${REDACTED}."}}`,
      );
      expect(JSON.parse(redacted)).toEqual({
        error: { message: `Incorrect API key provided: ${REDACTED}.` },
      });
    }
  });

  it('blanks a masked fragment of the key written with escapes', () => {
    const key = 'sk-abcdefghijklmnopqrstuvwxyz012345';
    const redact = createRedactor(key);
    expect(redact('"sk-\\u0061bc****\\u0034\\u0035"')).toBe(`"${REDACTED}"`);
  });

  it('leaves an escaped backslash before a u alone: that is text, not an escape', () => {
    const key = 'sk-abcdefghijklmnopqrstuvwxyz012345';
    const redact = createRedactor(key);
    const text = JSON.stringify({ text: 'sk-\\u0061bcdefghijklmnopqrstuvwxyz012345' });
    expect(text).toContain('\\\\u0061');
    // Its value is not the key: a backslash, a u and four digits stand where the key has an a.
    expect(redact(text)).toBe(text);
  });

  it('keeps a body without the key byte for byte, escapes included', () => {
    const redact = createRedactor('sk-abcdefghijklmnopqrstuvwxyz012345');
    const text = '{"a":"\\u003cb\\u003e \\/ \\u0022 \\\\u0061 \\u00e9"}';
    expect(redact(text)).toBe(text);
  });

  it('stays linear on a long backslash run next to escapes', () => {
    const redact = createRedactor('sk-abcdefghijklmnopqrstuvwxyz012345');
    const hostile = `${'\\'.repeat(400_000)}x\\u0061${'\\'.repeat(400_000)}`;
    const started = performance.now();
    expect(redact(hostile)).toBe(hostile);
    // Generous: a quadratic scan would take hours, a linear one milliseconds.
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('property: no escaping of any of its characters, in any hex case, gets the key through', () => {
    fc.assert(
      fc.property(
        escapedKeyArbitrary,
        fc.string(),
        fc.string(),
        ({ key, written }, before, after) => {
          const redact = createRedactor(key);
          const prefix = JSON.stringify(before).slice(0, -1);
          const suffix = JSON.stringify(after).slice(1);
          const text = `{"message":${prefix}${written}${suffix}}`;
          // The text is the JSON an upstream could send, the key in its value.
          expect((JSON.parse(text) as { message: string }).message).toContain(key);
          const redacted = redact(text);
          const value = (JSON.parse(redacted) as { message: string }).message;
          expect(value).not.toContain(key);
          expect(value).toContain(REDACTED);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('property: JSON that does not hold the key comes back unchanged', () => {
    const redact = createRedactor('sk-Zq9_-xY7wV6uT5sR4qP3oN2mL1kJ0');
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expect(redact(text)).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('blanks each of several secrets, and ignores ones too short to look for', () => {
    const redact = createSecretsRedactor([
      'Bearer ghp_0123456789abcdef',
      'ghp_0123456789abcdef',
      'x',
    ]);
    expect(redact('auth: Bearer ghp_0123456789abcdef; token \\u0067hp_0123456789abcdef x')).toBe(
      `auth: ${REDACTED}; token ${REDACTED} x`,
    );
  });
});
