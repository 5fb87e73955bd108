import { describe, expect, it } from 'vitest';
import { INPUT_LIMITS } from '../../../src/protocol/request-limits';
import {
  base64Length,
  DEFAULT_PROXY_MAX_BODY_BYTES,
  DEFAULT_PROXY_MAX_MESSAGE_CHARS,
  REQUEST_ROOM_BYTES,
} from '../../../src/proxy/default-limits';
import { resolveProxyOptions } from '../../../src/proxy/proxy-options';
import { applyRequestPolicy } from '../../../src/proxy/request-policy';
import { ROUTES } from '../../../src/proxy/routes';

// The proxy's default size caps are derived from the agent's default input limits: the
// worst user message an input within them can make (every character one JSON escapes to six,
// every part's URL at its longest, the attachment bytes at their most) passes them.

const defaults = resolveProxyOptions({
  upstream: 'https://api.example.com/v1',
  apiKey: 'sk-test',
  allowAnonymous: true,
  logger: () => {},
});

/** Escaped by JSON to six characters each, and not valid in a URL either: a bound, not a use. */
const worst = (length: number) => '\u0001'.repeat(length);

/** The largest user message (Chat Completions shape) an input within the default limits makes. */
function worstMessage(): { role: 'user'; content: Record<string, unknown>[] } {
  const parts: Record<string, unknown>[] = [
    { type: 'text', text: worst(INPUT_LIMITS.maxInputChars) },
    {
      type: 'image_url',
      image_url: {
        url: `data:image/png;base64,${'A'.repeat(base64Length(INPUT_LIMITS.maxInputBytes))}`,
        detail: 'high',
      },
    },
  ];
  while (parts.length < INPUT_LIMITS.maxContentParts) {
    parts.push(
      parts.length % 2 === 0
        ? {
            type: 'image_url',
            image_url: { url: worst(INPUT_LIMITS.maxImageUrlChars), detail: 'high' },
          }
        : {
            type: 'file',
            file: {
              filename: worst(INPUT_LIMITS.maxFilenameChars),
              file_data: 'data:application/pdf;base64,',
            },
          },
    );
  }
  return { role: 'user', content: parts };
}

describe("the proxy's default size caps", () => {
  it('are what the shared table derives from the agent defaults', () => {
    expect(defaults.policy.maxMessageChars).toBe(DEFAULT_PROXY_MAX_MESSAGE_CHARS);
    expect(defaults.maxBodyBytes).toBe(DEFAULT_PROXY_MAX_BODY_BYTES);
    expect(DEFAULT_PROXY_MAX_BODY_BYTES).toBe(DEFAULT_PROXY_MAX_MESSAGE_CHARS + REQUEST_ROOM_BYTES);
  });

  it('let the worst message of a default input through, in characters of JSON and in bytes of the body', () => {
    const message = worstMessage();
    const chars = JSON.stringify(message).length;
    expect(chars).toBeLessThanOrEqual(DEFAULT_PROXY_MAX_MESSAGE_CHARS);
    const body = { model: 'gpt-4o-mini', messages: [message], stream: true };
    const checked = applyRequestPolicy(
      'chat/completions',
      ROUTES['chat/completions'],
      body,
      defaults.policy,
    );
    expect(checked.kind).toBe('checked');
    // The rest of the request has its room on top of the message.
    expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThanOrEqual(
      DEFAULT_PROXY_MAX_BODY_BYTES - REQUEST_ROOM_BYTES,
    );
  });

  it('still refuse a message one character over the cap with limit_exceeded', () => {
    const text = 'x'.repeat(
      DEFAULT_PROXY_MAX_MESSAGE_CHARS - JSON.stringify({ role: 'user', content: '' }).length + 1,
    );
    const refused = applyRequestPolicy(
      'chat/completions',
      ROUTES['chat/completions'],
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] },
      defaults.policy,
    );
    expect(refused).toMatchObject({ kind: 'refused', status: 400, code: 'limit_exceeded' });
  });
});
