// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { injectServedModel } from '../../../demo/server/model-endpoint';
import { readStoredToolResult } from '../../../demo/views/stored-tool-result';
import { formatToolOutput } from '../../../src/worker/tools/tool-message';

describe('reading a stored tool message back for its card', () => {
  it('reads an ok output, closing tags inside it included', () => {
    const output = { note: 'a </tool_output> inside' };
    const content = formatToolOutput('echo', 'c1', {
      ok: true,
      output,
      content: JSON.stringify(output),
    });

    expect(readStoredToolResult(content)).toEqual({ ok: true, output });
  });

  it('reads a failure as its code and message', () => {
    const content = formatToolOutput('slow_report', 'c2', {
      ok: false,
      error: { code: 'tool-timeout', message: 'Too slow.' },
    });

    expect(readStoredToolResult(content)).toEqual({
      ok: false,
      error: { code: 'tool-timeout', message: 'Too slow.' },
    });
  });
});

describe('telling the page which model the server serves', () => {
  it('writes the model into the meta tag, escaped', () => {
    const html = '<head><meta name="airlock-demo-model" content="airlock-offline" /></head>';

    expect(injectServedModel(html, 'gpt-4o-mini')).toBe(
      '<head><meta name="airlock-demo-model" content="gpt-4o-mini" /></head>',
    );
    expect(injectServedModel(html, 'a"b<c')).toContain('content="a&#34;b&#60;c"');
  });
});
