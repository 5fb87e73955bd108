import { describe, expect, it } from 'vitest';
import { PageGuardrailHost } from '../../../src/page/guardrail-host';

const context = { runId: 'run_1', conversationId: 'conv_1' };

describe('the page guardrail host', () => {
  it('runs guardrails in order, each seeing the previous rewrite, and names who rewrote', async () => {
    const seen: string[] = [];
    const host = new PageGuardrailHost({
      input: [
        function redactEmails(input) {
          seen.push(input);
          return { action: 'rewrite', value: input.replace(/\S+@\S+/g, '[email]') };
        },
        (input) => {
          seen.push(input);
          return { action: 'allow' };
        },
      ],
    });

    const verdict = await host.checkInput('Write to ada@example.com', context);

    expect(seen).toEqual(['Write to ada@example.com', 'Write to [email]']);
    expect(verdict).toEqual({
      action: 'allow',
      value: 'Write to [email]',
      rewrittenBy: ['redactEmails'],
    });
    expect(host.flags).toEqual({ input: true, output: false, toolArguments: false });
  });

  it('stops at the first block, and blocks when a guardrail throws or answers nonsense', async () => {
    const after: string[] = [];
    const host = new PageGuardrailHost({
      output: [
        function noSecrets() {
          return { action: 'block', reason: 'It mentions the launch code.' };
        },
        () => {
          after.push('ran');
          return { action: 'allow' };
        },
      ],
      toolArguments: [
        () => {
          throw new Error('policy service down');
        },
      ],
      input: () => undefined as never,
    });

    expect(await host.checkOutput('The code is 1234', context)).toEqual({
      action: 'block',
      name: 'noSecrets',
      reason: 'It mentions the launch code.',
    });
    expect(after).toEqual([]);
    expect(
      await host.checkToolArguments({ callId: 'c', toolName: 't', arguments: {} }, context),
    ).toEqual({
      action: 'block',
      name: 'toolArguments[0]',
      reason: 'The guardrail failed: policy service down',
    });
    expect(await host.checkInput('hi', context)).toMatchObject({ action: 'block', name: 'input' });
  });

  it('hands tool-argument guardrails the call and takes new arguments back', async () => {
    const host = new PageGuardrailHost({
      toolArguments: ({ toolName, arguments: args }) =>
        toolName === 'read_file'
          ? { action: 'rewrite', value: { ...(args as object), path: '/sandbox/a.txt' } }
          : { action: 'allow' },
    });

    const verdict = await host.checkToolArguments(
      { callId: 'c', toolName: 'read_file', arguments: { path: '../a.txt' } },
      context,
    );

    expect(verdict).toEqual({
      action: 'allow',
      value: { path: '/sandbox/a.txt' },
      rewrittenBy: ['toolArguments'],
    });
  });
});
