// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { LONG_ANSWER } from '../../../demo/model/long-answer';
import { offlineModel } from '../../../demo/model/offline-model';
import {
  answerAfter,
  ask,
  asReply,
  errorToolMessage,
  okToolMessage,
  requestWith,
} from './offline-requests';

describe('the offline demo model, on memory', () => {
  it('saves "remember that my favourite colour is green" with save_memory, keyed by the subject', () => {
    expect(ask('Remember that my favourite colour is green').toolCalls).toEqual([
      {
        id: 'call_0_0_0',
        name: 'save_memory',
        arguments: { key: 'favourite-colour', content: "The user's favourite colour is green" },
      },
    ]);
  });

  it('saves a note too, keyed by its first words', () => {
    expect(ask('note: I am vegetarian.').toolCalls?.[0]).toMatchObject({
      name: 'save_memory',
      arguments: { key: 'i-am-vegetarian', content: 'The user is vegetarian' },
    });
  });

  it('looks memories up with recall_memories, with the words after "about" as the query', () => {
    expect(ask('What do you remember?').toolCalls?.[0]).toMatchObject({
      name: 'recall_memories',
      arguments: {},
    });
    expect(ask('what do you know about my favourite colour?').toolCalls?.[0]).toMatchObject({
      name: 'recall_memories',
      arguments: { query: 'favourite colour' },
    });
  });

  it('confirms a save and lists recalled memories from the tool results', () => {
    const saved = answerAfter(
      'save_memory',
      { key: 'favourite-colour', content: 'x' },
      okToolMessage('save_memory', 'a', { saved: 'favourite-colour', scope: 'lasting' }),
    );
    const recalled = answerAfter(
      'recall_memories',
      {},
      okToolMessage('recall_memories', 'b', [
        { key: 'favourite-colour', content: "The user's favourite colour is green" },
      ]),
    );
    const none = answerAfter('recall_memories', {}, okToolMessage('recall_memories', 'c', []));

    expect(saved).toMatch(/remember that \(saved as "favourite-colour"\)/);
    expect(recalled).toBe("I remember: favourite-colour: The user's favourite colour is green.");
    expect(none).toMatch(/nothing saved/);
  });
});

describe('the offline demo model, on the page and sandbox tools', () => {
  it('asks for set_theme with the colour named when told to change the page', () => {
    expect(ask('Make the page green').toolCalls?.[0]).toMatchObject({
      name: 'set_theme',
      arguments: { color: 'green' },
    });
    expect(ask('change the accent colour to teal please').toolCalls?.[0]?.arguments).toEqual({
      color: 'teal',
    });
  });

  it('passes an unknown colour after "to" on, for the tool to refuse, and asks when none is named', () => {
    expect(ask('set the theme to beige').toolCalls?.[0]?.arguments).toEqual({ color: 'beige' });
    expect(ask('change the page').text).toMatch(/Which colour\?/);
  });

  it('reads "remember that my favourite colour is green" as a memory, not a page change', () => {
    expect(ask('remember that my favourite colour is green').toolCalls?.[0]?.name).toBe(
      'save_memory',
    );
  });

  it('asks for slow_report and fetch_headline with the topic after "on" or "about"', () => {
    expect(ask('Write a report on sales').toolCalls?.[0]).toMatchObject({
      name: 'slow_report',
      arguments: { topic: 'sales' },
    });
    expect(ask('Get a headline about space').toolCalls?.[0]).toMatchObject({
      name: 'fetch_headline',
      arguments: { topic: 'space' },
    });
    // A weather report is about the weather.
    expect(ask('weather report for Oslo').toolCalls?.[0]?.name).toBe('get_weather');
  });

  it('says the user declined when set_theme was rejected, with their reason', () => {
    const text = answerAfter(
      'set_theme',
      { color: 'green' },
      errorToolMessage(
        'set_theme',
        'a',
        'tool-rejected',
        'The user rejected this call to "set_theme": not now',
      ),
    );

    expect(text).toBe('I did not run set_theme: you declined ("not now").');
  });

  it('says a timed-out call was stopped and the run went on', () => {
    const text = answerAfter(
      'slow_report',
      { topic: 'sales' },
      errorToolMessage('slow_report', 'a', 'tool-timeout', 'No answer within 1500 ms.'),
    );

    expect(text).toMatch(/missed its deadline.*tool-timeout/);
  });

  it('reports the headline and what the iframe sandbox could reach', () => {
    const text = answerAfter(
      'fetch_headline',
      { topic: 'space' },
      okToolMessage('fetch_headline', 'a', {
        topic: 'space',
        headline: 'Space news',
        sandbox: {
          origin: 'null',
          indexedDB: 'blocked (SecurityError)',
          appServer: 'unreachable (connect-src blocks it)',
        },
      }),
    );

    expect(text).toBe(
      'Headline: "Space news" (invented). It was made in the iframe sandbox, where its origin is "null", IndexedDB blocked (SecurityError), the app\'s server unreachable (connect-src blocks it).',
    );
  });
});

describe('the offline demo model, on everything else', () => {
  it('streams a long answer, with no tool call, when asked for a long story', () => {
    const reply = ask('Tell me a long story');

    expect(reply.toolCalls).toBeUndefined();
    expect(reply.text).toBe(LONG_ANSWER);
    // Long enough that Stop can be pressed while it streams: seconds at the chunk delay.
    expect(LONG_ANSWER.split(' ').length * (reply.chunkDelayMs ?? 0)).toBeGreaterThan(5_000);
  });

  it('folds the user questions into the summary when Airlock asks for one', () => {
    const request = requestWith(
      [
        { role: 'system', content: 'You keep a running summary of a conversation between …' },
        {
          role: 'user',
          content:
            'Current summary:\nThe user asked: hello\n\nNew messages:\nuser: what is 2+2\nassistant: 4\nuser: make the page green',
        },
      ],
      [],
    );

    expect(asReply(offlineModel(request, 0)).text).toBe(
      'The user asked: hello | what is 2+2 | make the page green',
    );
  });

  it('gives tool calls ids that differ after a server restart, since conversations outlive it', () => {
    const question = [{ role: 'user', content: 'What is 2+2?' }];
    const before = asReply(offlineModel(requestWith(question, undefined, 1_000), 0));
    const after = asReply(offlineModel(requestWith(question, undefined, 2_000), 0));

    expect(before.toolCalls?.[0]?.id).not.toBe(after.toolCalls?.[0]?.id);
  });
});
