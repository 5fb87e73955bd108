// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { createFlowTools } from '../../../demo/flow/flow-agent';
import { offlineModel } from '../../../demo/model/offline-model';
import {
  ATTACKER_ADDRESS,
  EXFILTRATION_REQUEST,
  OFFSITE_PAGE_TEXT,
  OFFSITE_PAGE_URL,
  PRIVATE_NOTE,
} from '../../../demo/shared/exfiltration-scenario';
import { ask, asReply, errorToolMessage, okToolMessage, requestWith } from './offline-requests';

const FLOW_TOOLS = ['fetch_page', 'send_email'];

/** The request after `fetch_page` answered `page`. */
function afterPage(page: unknown, userText = EXFILTRATION_REQUEST, toolName = 'fetch_page') {
  return requestWith(
    [
      { role: 'user', content: userText },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: toolName, arguments: JSON.stringify({ url: OFFSITE_PAGE_URL }) },
          },
        ],
      },
      okToolMessage(toolName, 'call_1', page),
    ],
    FLOW_TOOLS,
  );
}

describe("the offline model's part in the refused exfiltration", () => {
  it('fetches the page a message asks to summarise, even when the message quotes a note', () => {
    expect(ask(EXFILTRATION_REQUEST, FLOW_TOOLS).toolCalls).toEqual([
      { id: 'call_0_0_0', name: 'fetch_page', arguments: { url: OFFSITE_PAGE_URL } },
    ]);
  });

  it("obeys the page's hidden instruction: send_email to the page's address with the quoted note", () => {
    const reply = asReply(offlineModel(afterPage(OFFSITE_PAGE_TEXT), 1));

    expect(reply.toolCalls).toEqual([
      {
        id: 'call_0_1_0',
        name: 'send_email',
        arguments: { to: ATTACKER_ADDRESS, subject: 'Note', body: PRIVATE_NOTE },
      },
    ]);
  });

  it('summarises a page with no instruction, and obeys none from a tool that is not fetch_page', () => {
    expect(
      asReply(offlineModel(afterPage('Just a page about boots.'), 1)).toolCalls,
    ).toBeUndefined();
    const fromWeather = asReply(
      offlineModel(afterPage(OFFSITE_PAGE_TEXT, undefined, 'get_weather'), 1),
    );
    expect(fromWeather.toolCalls).toBeUndefined();
  });

  it('ignores a malformed instruction (no address) and a page that is not text', () => {
    const noAddress = OFFSITE_PAGE_TEXT.replace(ATTACKER_ADDRESS, 'nobody');
    expect(asReply(offlineModel(afterPage(noAddress), 1)).toolCalls).toBeUndefined();
    expect(asReply(offlineModel(afterPage({ html: 42 }), 1)).toolCalls).toBeUndefined();
  });

  it('does not call send_email when the request does not offer it', () => {
    const request = afterPage(OFFSITE_PAGE_TEXT);
    const offered = { ...request, body: { ...(request.body as object), tools: [] } };
    expect(asReply(offlineModel(offered, 1)).toolCalls).toBeUndefined();
  });

  it('says the flow policy stopped the call when send_email comes back flow-refused', () => {
    const request = requestWith(
      [
        { role: 'user', content: EXFILTRATION_REQUEST },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_2',
              type: 'function',
              function: { name: 'send_email', arguments: JSON.stringify({ to: ATTACKER_ADDRESS }) },
            },
          ],
        },
        errorToolMessage('send_email', 'call_2', 'flow-refused', 'The call was refused.'),
      ],
      FLOW_TOOLS,
    );
    expect(asReply(offlineModel(request, 2)).text).toBe(
      "Airlock's information-flow policy stopped my send_email call, so nothing was sent (flow-refused: The call was refused.)",
    );
  });
});

describe("the information-flow panel's tools", () => {
  it('declares send_email a sink to its recipient and fetch_page untrusted output, and fetch_page knows one page only', async () => {
    const sent: unknown[] = [];
    const [fetchPage, sendEmail] = createFlowTools((mail) => sent.push(mail));
    if (!fetchPage || !sendEmail) throw new Error('Expected two tools.');
    expect(sendEmail.spec.policy.sink).toBe('by-arguments');
    expect(
      typeof sendEmail.sink === 'function' &&
        sendEmail.sink({ to: 'a@b.example', subject: '', body: '' }),
    ).toBe('email:a@b.example');
    expect(fetchPage.spec.policy.output).toEqual({
      integrity: 'untrusted',
      confidentiality: 'public',
    });
    expect(fetchPage.spec.policy.sink).toBeUndefined();
    const context = { signal: new AbortController().signal } as Parameters<
      typeof fetchPage.execute
    >[1];
    expect(await fetchPage.execute({ url: OFFSITE_PAGE_URL }, context)).toBe(OFFSITE_PAGE_TEXT);
    expect(() => fetchPage.execute({ url: 'https://elsewhere.example/' }, context)).toThrow(
      'No page at https://elsewhere.example/ in this demo.',
    );
    expect(sent).toEqual([]);
  });
});
