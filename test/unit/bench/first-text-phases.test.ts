import { describe, expect, it } from 'vitest';
import {
  CONVERSATION_LOCK,
  phasesFrom,
  phaseTable,
} from '../../../bench/lab/first-text-phases.mjs';
import { summarize } from '../../../bench/stats';
import {
  relayChannelName,
  relayPresenceLockName,
  relayWatchLockName,
} from '../../../src/protocol/tab-relay';
import { conversationLockName } from '../../../src/worker/run/conversation-lock';

describe("a run's phases on the way to its first text", () => {
  it("takes each phase's first mark from the run's call on, in ms from it", () => {
    const startedAt = 1_000;
    expect(
      phasesFrom(
        [
          // The last run's tail, before this one was called.
          ['input stored', 990],
          ['lock asked', 1_001.5],
          ['lock held', 1_002],
          ['request sent', 1_003],
          ['input write opened', 1_004],
          ['headers', 1_011],
          ['input stored', 1_012.5],
          // A later step's write and request: not this run's first.
          ['request sent', 1_200],
          ['input stored', 1_300],
          ['first text sent', 1_015],
        ],
        startedAt,
      ),
    ).toEqual({
      'lock asked': 1.5,
      'lock held': 2,
      'request sent': 3,
      'input write opened': 4,
      headers: 11,
      'input stored': 12.5,
      'first text sent': 15,
    });
  });

  it('leaves out marks of no phase it knows, and phases that never came', () => {
    expect(
      phasesFrom(
        [
          ['request sent', 5],
          ['something else', 6],
        ],
        4,
      ),
    ).toEqual({ 'request sent': 1 });
    expect(phasesFrom([], 0)).toEqual({});
  });

  it("times the conversation's lock, not the locks of its run's relay to other tabs", () => {
    const database = `airlock-bench-${crypto.randomUUID()}`;
    const conversationId = crypto.randomUUID();
    const channel = relayChannelName(database, conversationId);
    expect(CONVERSATION_LOCK.test(conversationLockName(database, conversationId))).toBe(true);
    expect(CONVERSATION_LOCK.test(relayWatchLockName(channel))).toBe(false);
    expect(CONVERSATION_LOCK.test(relayPresenceLockName(channel, crypto.randomUUID()))).toBe(false);
  });

  it("tabulates each phase's median per entrant, with a dash for a phase it never has", () => {
    const lines = phaseTable(
      {
        airlock: [
          { 'lock held': 2, 'request sent': 3 },
          { 'lock held': 4, 'request sent': 5 },
          { 'lock held': 3, 'request sent': 4 },
        ],
        'raw-worker': [{ 'request sent': 1 }, { 'request sent': 2 }, { 'request sent': 1.5 }],
      },
      { airlock: [10, 12, 11], 'raw-worker': [8, 9, 10] },
      summarize,
    );
    const row = (phase: string) => lines.find((line) => line.startsWith(phase))?.split(/\s{2,}/);
    expect(row('lock held')).toEqual(['lock held', '3.0', '-']);
    expect(row('request sent')).toEqual(['request sent', '4.0', '1.5']);
    expect(row('first text at the page')).toEqual(['first text at the page', '11.0', '9.0']);
    expect(row('input stored')).toEqual(['input stored', '-', '-']);
  });
});
