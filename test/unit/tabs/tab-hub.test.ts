import { afterEach, describe, expect, it, vi } from 'vitest';
import { ownTabChannels, type TabChannels, tabChannelsOver } from '../../../src/tabs/tab-channels';
import { parseToTabHub, TabHub } from '../../../src/tabs/tab-hub';

/** Clients of one hub, each over a port of its own, as the tabs' agent workers are. */
function hubWithClients(count: number): TabChannels[] {
  const hub = new TabHub(undefined);
  return Array.from({ length: count }, () => {
    const { port1, port2 } = new MessageChannel();
    hub.connect(port1);
    const channels = tabChannelsOver(port2);
    opened.push(channels);
    return channels;
  });
}

const opened: TabChannels[] = [];
afterEach(() => {
  for (const channels of opened.splice(0)) channels.close();
});

/** Messages received on a channel, in order. */
function received(channel: { onmessage: ((event: { data: unknown }) => void) | null }) {
  const messages: unknown[] = [];
  channel.onmessage = ({ data }) => messages.push(data);
  return messages;
}

/** Resolves once the hub has handled what `channels` posted so far (it handles a client's messages in order). */
async function settled(channels: TabChannels): Promise<void> {
  const name = `settled-${Math.random()}`;
  const listening = channels.open(name);
  const heard = new Promise<void>((resolve) => {
    listening.onmessage = () => resolve();
  });
  channels.open(name).postMessage('settled?');
  await heard;
}

describe('the tab hub', () => {
  it("delivers what one client posts to every other channel of that name, in order, the poster's own other channels included", async () => {
    const [a, b, c] = hubWithClients(3) as [TabChannels, TabChannels, TabChannels];
    const fromA = a.open('relay');
    const alsoA = received(a.open('relay'));
    const atB = received(b.open('relay'));
    const atC = received(c.open('other'));
    const mine = received(fromA);
    await Promise.all([settled(a), settled(b), settled(c)]);

    for (const n of [1, 2, 3]) fromA.postMessage({ n });
    await settled(a);
    await settled(b);

    expect(atB).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(alsoA).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(mine).toEqual([]);
    expect(atC).toEqual([]);
  });

  it('stops delivering to a closed channel, and a closed channel posts nothing', async () => {
    const [a, b] = hubWithClients(2) as [TabChannels, TabChannels];
    const fromA = a.open('relay');
    const atB = b.open('relay');
    const heard = received(atB);
    await Promise.all([settled(a), settled(b)]);
    atB.close();
    fromA.postMessage('after close');
    await settled(a);
    await settled(b);
    expect(heard).toEqual([]);

    const again = received(b.open('relay'));
    await settled(b);
    fromA.close();
    fromA.postMessage('from a closed channel');
    a.open('relay').postMessage('from a new one');
    await settled(a);
    await settled(b);
    expect(again).toEqual(['from a new one']);
  });

  it('takes no post on a channel a client did not open, nor anything off the wire, from a hostile client', async () => {
    const hub = new TabHub(undefined);
    const { port1, port2 } = new MessageChannel();
    hub.connect(port1);
    const [honest] = hubWithClientsOn(hub, 1) as [TabChannels];
    const heard = received(honest.open('relay'));
    await settled(honest);
    // The hostile client speaks the wire by hand.
    for (const junk of [
      null,
      'post',
      { kind: 'post', channel: 0, data: 'never opened' },
      { kind: 'open', channel: -1, name: 'relay' },
      { kind: 'open', channel: 1.5, name: 'relay' },
      { kind: 'open', channel: 2, name: '' },
      { kind: 'open', channel: 3, name: 'x'.repeat(1_025) },
      { kind: 'open', channel: 4, name: 42 },
      { kind: 'post', channel: '5', data: 'wrong-typed channel' },
      { kind: 'hello', lock: 7 },
      { kind: 'subscribe-all' },
    ])
      port2.postMessage(junk);
    port2.postMessage({ kind: 'open', channel: 9, name: 'relay' });
    port2.postMessage({ kind: 'post', channel: 9, data: 'well-formed' });
    await settled(honest);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(heard).toEqual(['well-formed']);
    expect(hub.openCount('relay')).toBe(2);
    port2.close();
  });

  it('caps the channels one client holds open', async () => {
    const hub = new TabHub(undefined);
    const [flooder, honest] = hubWithClientsOn(hub, 2) as [TabChannels, TabChannels];
    for (let i = 0; i < 10_050; i++) flooder.open(`flood-${i % 3}`);
    const flooded = () =>
      hub.openCount('flood-0') + hub.openCount('flood-1') + hub.openCount('flood-2');
    await vi.waitFor(() => expect(flooded()).toBe(10_000));
    // Past the cap, even its own probe of the hub is not opened.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(flooded()).toBe(10_000);
    // Another client is not held to the first one's count.
    const heard = received(honest.open('flood-0'));
    await settled(honest);
    expect(hub.openCount('flood-0')).toBeGreaterThan(3_000);
    expect(heard).toEqual([]);
  });

  it("keeps a worker of its own when no hub is given: channels reach that worker's own, nothing else", async () => {
    const own = ownTabChannels();
    opened.push(own);
    const [elsewhere] = hubWithClients(1) as [TabChannels];
    const heard = received(own.open('relay'));
    const away = received(elsewhere.open('relay'));
    own.open('relay').postMessage('here');
    await settled(own);
    await settled(elsewhere);
    expect(own.acrossTabs).toBe(false);
    expect(heard).toEqual(['here']);
    expect(away).toEqual([]);
  });

  it('parses a client message by its fields, never by trust', () => {
    expect(parseToTabHub({ kind: 'open', channel: 0, name: 'n' })).toEqual({
      kind: 'open',
      channel: 0,
      name: 'n',
    });
    expect(parseToTabHub({ kind: 'post', channel: 1, data: { a: 1 }, extra: true })).toEqual({
      kind: 'post',
      channel: 1,
      data: { a: 1 },
    });
    expect(parseToTabHub({ kind: 'hello', lock: 'l' })).toEqual({ kind: 'hello', lock: 'l' });
    expect(parseToTabHub({ kind: 'close', channel: Number.MAX_SAFE_INTEGER + 1 })).toBeUndefined();
    expect(parseToTabHub(Object.create({ kind: 'close', channel: 0 }))).toEqual({
      kind: 'close',
      channel: 0,
    });
  });
});

function hubWithClientsOn(hub: TabHub, count: number): TabChannels[] {
  return Array.from({ length: count }, () => {
    const { port1, port2 } = new MessageChannel();
    hub.connect(port1);
    const channels = tabChannelsOver(port2);
    opened.push(channels);
    return channels;
  });
}
