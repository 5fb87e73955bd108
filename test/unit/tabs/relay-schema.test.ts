// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { parseRelayMessage } from '../../../src/worker/tabs/relay-schema';

/** A relay message carrying one event, as another tab posts it. */
const carrying = (event: Record<string, unknown>) => ({
  kind: 'events',
  source: 'tab_1',
  runId: 'run_1',
  seq: 0,
  events: [event],
});

describe('a relayed step-restarted event', () => {
  it('passes with its step, reason and restart count', () => {
    const event = { type: 'step-restarted', step: 2, reason: 'connection-lost', restart: 1 };
    expect(parseRelayMessage(carrying(event))).toEqual({
      ok: true,
      message: carrying(event),
    });
  });

  it('is dropped when another tab forges its step, reason or count', () => {
    for (const forged of [
      { type: 'step-restarted', step: 0, reason: 'connection-lost', restart: 1 },
      { type: 'step-restarted', step: '2', reason: 'connection-lost', restart: 1 },
      { type: 'step-restarted', step: 2, reason: 'server-said-so', restart: 1 },
      { type: 'step-restarted', step: 2, reason: 'connection-lost', restart: 0 },
      { type: 'step-restarted', step: 2, reason: 'connection-lost', restart: 1.5 },
      { type: 'step-restarted', step: 2, reason: 'connection-lost' },
    ])
      expect(parseRelayMessage(carrying(forged)).ok, JSON.stringify(forged)).toBe(false);
  });
});
