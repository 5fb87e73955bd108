import { describe, expect, it } from 'vitest';
import {
  conversationOfWatchLock,
  relayChannelName,
  relayListenerLockName,
  relayWatchLockName,
} from '../../../src/protocol/tab-relay';
import {
  listenerOfLock,
  parseWatchesMessage,
} from '../../../src/worker/tabs/watched-conversations';

describe('the watch locks an agent worker lists at its start', () => {
  it('reads the conversation back from a watch lock of its database, whatever the ids hold', () => {
    for (const [database, conversationId] of [
      ['airlock', 'c1'],
      ['app:prod', 'a:b:relay:watch'],
      ['db', 'conversation:x'],
    ] as const) {
      const lock = relayWatchLockName(relayChannelName(database, conversationId));
      expect(conversationOfWatchLock(database, lock)).toBe(conversationId);
    }
  });

  it('takes no other lock for a watch: another database, a run, a listener, a bare prefix', () => {
    const channel = relayChannelName('db', 'c1');
    for (const name of [
      relayWatchLockName(relayChannelName('other', 'c1')),
      `${channel}:run:r1`,
      channel,
      relayListenerLockName('db', 'listener_1'),
      'airlock:db:conversation:',
      '',
    ])
      expect(conversationOfWatchLock('db', name)).toBeUndefined();
  });
});

describe('the listener locks a watch waits for', () => {
  it("reads back a worker's listener id, and takes no watch lock or other database's lock for one", () => {
    expect(listenerOfLock('db', relayListenerLockName('db', 'listener_1'))).toBe('listener_1');
    for (const name of [
      relayListenerLockName('other', 'listener_1'),
      relayWatchLockName(relayChannelName('db', 'c1')),
      '',
    ])
      expect(listenerOfLock('db', name)).toBeUndefined();
  });
});

describe('messages on the watches channel', () => {
  it('reads an announcement and an answer', () => {
    expect(
      parseWatchesMessage({ kind: 'watching', requestId: 'w1', conversationId: 'c1' }),
    ).toEqual({ kind: 'watching', requestId: 'w1', conversationId: 'c1' });
    expect(
      parseWatchesMessage({ kind: 'heard', requestId: 'w1', listener: 'listener_1', extra: 1 }),
    ).toEqual({ kind: 'heard', requestId: 'w1', listener: 'listener_1' });
  });

  it('refuses anything else: wrong kinds and types, empty and oversized ids', () => {
    for (const junk of [
      undefined,
      null,
      'watching',
      42,
      [],
      { kind: 'watching', conversationId: 'c1' },
      { kind: 'watching', requestId: 'w1' },
      { kind: 'watching', requestId: 'w1', conversationId: 7 },
      { kind: 'watching', requestId: '', conversationId: 'c1' },
      { kind: 'watching', requestId: 'w1', conversationId: 'x'.repeat(257) },
      { kind: 'heard', requestId: 'w1', conversationId: 'c1' },
      { kind: 'heard', requestId: 'w1', listener: {} },
      { kind: 'sync', requestId: 'w1', conversationId: 'c1' },
    ])
      expect(parseWatchesMessage(junk)).toBeUndefined();
  });
});
