import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isAirlockError } from '../../../src/errors/airlock-error';
import type { FlowLabel, FlowPolicy, ValueLabel } from '../../../src/protocol/labels';
import type { ToolSpec } from '../../../src/protocol/tools';
import { tool } from '../../../src/tools/define-tool';
import { checkTool } from '../../../src/tools/run-tool';
import { decideFlow, EMPTY_LABEL, joinLabels } from '../../../src/worker/policy/flow-decision';
import { RunFlowTracker } from '../../../src/worker/policy/run-flow';
import { acceptCheck } from '../../../src/worker/tools/tool-answers';
import { parseToolSpecs } from '../../../src/worker/tools/tool-spec-schema';

// The flow policy's decision as a pure function of labels, and a run's tracker fed drawn
// sources and calls. The invariant of issue #50: no value of a confidentiality level reaches a
// sink outside that level's allowed destinations, and no sink runs after untrusted data
// without a recorded approval.

const LEVELS = ['public', 'private', 'health', 'constructor', '__proto__'] as const;
const DESTINATIONS = ['send_email', 'post:evil.example', 'post:me.example', ''] as const;

const valueLabel: fc.Arbitrary<ValueLabel> = fc.record(
  {
    confidentiality: fc.constantFrom(...LEVELS),
    integrity: fc.constantFrom('trusted' as const, 'untrusted' as const),
  },
  { requiredKeys: [] },
);

const policy: fc.Arbitrary<FlowPolicy> = fc.record({
  untrustedToSink: fc.constantFrom('approve' as const, 'refuse' as const),
  allowedDestinations: fc.dictionary(
    fc.constantFrom('private', 'health'),
    fc.array(fc.constantFrom(...DESTINATIONS), { maxLength: 3 }),
  ),
});

const sinkCall = fc.record(
  { sink: fc.boolean(), destination: fc.constantFrom(...DESTINATIONS) },
  { requiredKeys: ['sink'] },
);

function labelOf(values: readonly ValueLabel[]): FlowLabel {
  return values.reduce<FlowLabel>(joinLabels, EMPTY_LABEL);
}

describe('decideFlow', () => {
  it('never lets a level reach a sink outside its allowed destinations, nor a sink run after untrusted data', () => {
    fc.assert(
      fc.property(
        fc.array(valueLabel, { maxLength: 8 }),
        sinkCall,
        policy,
        (values, call, rules) => {
          const label = labelOf(values);
          const decision = decideFlow(label, call, rules);
          if (!call.sink) {
            expect(decision).toEqual({ action: 'run', rule: 'not-a-sink' });
            return;
          }
          const levels = values
            .map((value) => value.confidentiality)
            .filter((level) => level !== undefined && level !== 'public');
          const allowedEverywhere = levels.every((level) => {
            const list = Object.hasOwn(rules.allowedDestinations ?? {}, level as string)
              ? rules.allowedDestinations?.[level as string]
              : undefined;
            return call.destination !== undefined && (list ?? []).includes(call.destination);
          });
          if (!allowedEverywhere) {
            expect(decision).toEqual({ action: 'refuse', rule: 'destination-refused' });
          } else if (values.some((value) => value.integrity === 'untrusted')) {
            expect(decision.action).toBe(rules.untrustedToSink === 'refuse' ? 'refuse' : 'approve');
          } else {
            expect(decision).toEqual({ action: 'run', rule: 'trusted-context' });
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('joins labels as a set: the order of the values does not matter and joining twice changes nothing', () => {
    fc.assert(
      fc.property(fc.array(valueLabel, { maxLength: 8 }), (values) => {
        const label = labelOf(values);
        expect(labelOf([...values].reverse())).toEqual(label);
        expect(joinLabels(label, label)).toEqual(label);
        expect(label.confidentiality).not.toContain('public');
      }),
    );
  });

  it('finds no allowed destination through an inherited key such as constructor or __proto__', () => {
    const label = joinLabels(EMPTY_LABEL, { confidentiality: 'constructor' });
    expect(
      decideFlow(label, { sink: true, destination: 'send_email' }, { untrustedToSink: 'approve' }),
    ).toEqual({
      action: 'refuse',
      rule: 'destination-refused',
    });
  });

  it('refuses a private context sending to a sink that named no destination', () => {
    const label = joinLabels(EMPTY_LABEL, { confidentiality: 'private' });
    const rules: FlowPolicy = {
      untrustedToSink: 'approve',
      allowedDestinations: { private: ['send_email'] },
    };
    expect(decideFlow(label, { sink: true }, rules).action).toBe('refuse');
    expect(decideFlow(label, { sink: true, destination: 'send_email' }, rules).action).toBe('run');
  });
});

const sink: ToolSpec = {
  name: 'send_email',
  description: '',
  parameters: {},
  policy: { approval: 'never', sink: 'always' },
};
const reader = (output?: ValueLabel, mcpServer?: string): ToolSpec => ({
  name: mcpServer ? `${mcpServer}__read` : 'read_page',
  description: '',
  parameters: {},
  policy: { approval: 'never', ...(output ? { output } : {}) },
  ...(mcpServer ? { mcpServer } : {}),
});

describe('RunFlowTracker', () => {
  it('asks for approval of a sink once a tool result is in the context, naming the tool and call', () => {
    const stored: unknown[] = [];
    const tracker = new RunFlowTracker({ untrustedToSink: 'approve' }, undefined, (flow) =>
      stored.push(flow),
    );
    expect(tracker.decide(sink, { ok: true, needsApproval: false })?.action).toBe('run');
    tracker.noteResult(reader(), 'call-1');
    const verdict = tracker.decide(sink, { ok: true, needsApproval: false });
    expect(verdict?.action).toBe('approve');
    expect(verdict?.sources).toEqual([{ kind: 'tool', name: 'read_page', id: 'call-1' }]);
    expect(stored.at(-1)).toEqual({
      confidentiality: [],
      integrity: 'untrusted',
      sources: verdict?.sources,
    });
  });

  it('treats an MCP answer as untrusted even when its tool is declared trusted', () => {
    const tracker = new RunFlowTracker({ untrustedToSink: 'refuse' }, undefined, () => {});
    tracker.noteResult(reader({ integrity: 'trusted' }, 'docs'), 'call-2');
    const verdict = tracker.decide(sink, { ok: true, needsApproval: false });
    expect(verdict).toMatchObject({ action: 'refuse', rule: 'untrusted-refused' });
    expect(verdict?.sources).toEqual([{ kind: 'mcp', name: 'docs', id: 'call-2' }]);
  });

  it('labels memories, knowledge, earlier tool results and attachments in the starting context as untrusted', () => {
    const tracker = new RunFlowTracker({ untrustedToSink: 'approve' }, undefined, () => {});
    tracker.noteContext([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: '<airlock_data kind="memories">x</airlock_data>' },
      { role: 'user', content: '<airlock_data kind="knowledge">y</airlock_data>' },
      { role: 'tool', tool_call_id: 'old-1', content: 'z' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'read this' },
          { type: 'file', data: 'eA==', filename: 'notes.txt' },
        ],
      },
    ]);
    expect(tracker.state.integrity).toBe('untrusted');
    expect(tracker.state.sources.map((source) => source.kind)).toEqual([
      'memory',
      'knowledge',
      'history',
      'attachment',
    ]);
  });

  it('keeps a stored run label on resume, and takes stored labels that do not parse as private and untrusted', () => {
    const resumed = new RunFlowTracker(
      { untrustedToSink: 'approve' },
      { confidentiality: ['private'], integrity: 'trusted', sources: [] },
      () => {},
    );
    expect(resumed.decide(sink, { ok: true, needsApproval: false })?.rule).toBe(
      'destination-refused',
    );
    for (const forged of [
      null,
      'private',
      { confidentiality: 'private' },
      { confidentiality: [], integrity: 'yes', sources: [] },
      { confidentiality: [], integrity: 'trusted', sources: [{ kind: 'page' }] },
    ]) {
      const tracker = new RunFlowTracker({ untrustedToSink: 'approve' }, forged, () => {});
      expect(tracker.state).toMatchObject({ confidentiality: ['private'], integrity: 'untrusted' });
    }
  });

  it('keeps at most 50 sources however many results arrive', () => {
    const tracker = new RunFlowTracker({ untrustedToSink: 'approve' }, undefined, () => {});
    for (let index = 0; index < 500; index += 1) tracker.noteResult(reader(), `call-${index}`);
    expect(tracker.state.sources).toHaveLength(50);
  });

  it('takes a by-arguments sink answer as the destination, and a missing answer as a sink', () => {
    const tracker = new RunFlowTracker(
      { untrustedToSink: 'approve', allowedDestinations: { private: ['me.example'] } },
      { confidentiality: ['private'], integrity: 'trusted', sources: [] },
      () => {},
    );
    const post: ToolSpec = {
      ...sink,
      name: 'post',
      policy: { approval: 'never', sink: 'by-arguments' },
    };
    expect(
      tracker.decide(post, { ok: true, needsApproval: false, sink: 'me.example' })?.action,
    ).toBe('run');
    expect(
      tracker.decide(post, { ok: true, needsApproval: false, sink: 'evil.example' })?.action,
    ).toBe('refuse');
    expect(tracker.decide(post, { ok: true, needsApproval: false })?.action).toBe('refuse');
    expect(tracker.decide(post, { ok: true, needsApproval: false, sink: false })?.rule).toBe(
      'not-a-sink',
    );
  });
});

describe('declaring sinks and output labels', () => {
  const base = {
    name: 'post',
    description: 'Posts.',
    parameters: z.object({ to: z.string() }),
    execute: () => 'ok',
  };

  it('carries sink and outputLabel into the spec, and evaluates a sink rule in the check', async () => {
    expect(tool({ ...base, sink: true }).spec.policy.sink).toBe('always');
    expect(tool({ ...base, sink: false }).spec.policy).not.toHaveProperty('sink');
    const post = tool({
      ...base,
      sink: ({ to }) => `host:${to}`,
      outputLabel: { integrity: 'trusted' },
    });
    expect(post.spec.policy).toMatchObject({
      sink: 'by-arguments',
      output: { integrity: 'trusted' },
    });
    expect(
      await checkTool(post, { callId: 'c', toolName: 'post', arguments: { to: 'a' } }),
    ).toEqual({
      ok: true,
      needsApproval: false,
      sink: 'host:a',
    });
    // A rule answering neither a destination nor false counts as a sink.
    const odd = tool({ ...base, sink: () => 42 as unknown as boolean });
    expect(
      await checkTool(odd, { callId: 'c', toolName: 'post', arguments: { to: 'a' } }),
    ).toMatchObject({ sink: true });
    const throwing = tool({
      ...base,
      sink: () => {
        throw new Error('no');
      },
    });
    expect(
      await checkTool(throwing, { callId: 'c', toolName: 'post', arguments: { to: 'a' } }),
    ).toMatchObject({
      ok: false,
      error: { code: 'tool-failed' },
    });
  });

  it('refuses a sink or an output label of the wrong type with invalid-options naming the field', () => {
    const cases: [unknown, string][] = [
      [{ sink: 'yes' }, 'sink'],
      [{ outputLabel: 'trusted' }, 'outputLabel'],
      [{ outputLabel: { integrity: 'maybe' } }, 'outputLabel.integrity'],
      [{ outputLabel: { confidentiality: '' } }, 'outputLabel.confidentiality'],
      [{ outputLabel: { confidentiality: 'x'.repeat(65) } }, 'outputLabel.confidentiality'],
    ];
    for (const [extra, field] of cases) {
      let thrown: unknown;
      try {
        tool({ ...base, ...(extra as object) });
      } catch (error) {
        thrown = error;
      }
      expect(isAirlockError(thrown) && thrown.code).toBe('invalid-options');
      expect(isAirlockError(thrown) && thrown.details?.field).toBe(field);
    }
  });

  it('takes a sandbox check answer with a forged or huge sink as misbehaviour, and a spec sink it does not know as invalid', () => {
    for (const sink of [{ to: 'x' }, 7, 'd'.repeat(201), null]) {
      expect(acceptCheck({ ok: true, needsApproval: false, sink }, 'post')).toMatchObject({
        ok: false,
        error: { code: 'tool-misbehaved' },
      });
    }
    expect(acceptCheck({ ok: true, needsApproval: false, sink: 'host:a' }, 'post')).toEqual({
      ok: true,
      needsApproval: false,
      sink: 'host:a',
    });
    const spec = tool({ ...base, sink: true }).spec;
    expect(() =>
      parseToolSpecs([{ ...spec, policy: { ...spec.policy, sink: 'sometimes' } }], 'set'),
    ).toThrow();
    expect(() =>
      parseToolSpecs(
        [{ ...spec, policy: { ...spec.policy, output: { integrity: 'trusted!' } } }],
        'set',
      ),
    ).toThrow();
    // A spec from a page or a sandbox cannot claim to be an MCP server's.
    expect(parseToolSpecs([{ ...spec, mcpServer: 'docs' }], 'set')[0]).not.toHaveProperty(
      'mcpServer',
    );
  });
});
