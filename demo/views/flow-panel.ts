/**
 * The information-flow panel (issue #50): one refused exfiltration. The user's private note
 * goes into a run labelled `private`; the run fetches a scripted web page whose hidden text
 * tells the model to mail the note away; the offline model obeys; the agent's flow policy
 * refuses the `send_email` call. The panel shows the steps, the refusal with the rule that
 * decided and the untrusted sources the run recorded, and the outbox, which stays empty.
 */
import type { Agent, AgentEvent, FlowSource } from 'airlock-agents';
import type { ModelSettings } from '../demo-agent';
import { createFlowAgent, type SentMail } from '../flow/flow-agent';
import {
  EXFILTRATION_REQUEST,
  OFFSITE_PAGE_URL,
  PRIVATE_NOTE,
} from '../shared/exfiltration-scenario';
import { createElement, formatValue, requireElement } from './dom';

/** Wires `#flow-demo` of index.html; the panel's agent starts on the first click. */
export function createFlowPanel(settings: ModelSettings): void {
  const root = requireElement('flow-demo', HTMLElement);
  const runButton = requireElement('flow-run', HTMLButtonElement);
  const steps = requireElement('flow-steps', HTMLOListElement);
  const refusal = requireElement('flow-refusal', HTMLParagraphElement);
  const answer = requireElement('flow-answer', HTMLParagraphElement);
  const outboxList = requireElement('flow-outbox', HTMLUListElement);
  const outboxCount = requireElement('flow-outbox-count', HTMLParagraphElement);
  requireElement('flow-note', HTMLElement).textContent = PRIVATE_NOTE;
  requireElement('flow-page-url', HTMLElement).textContent = OFFSITE_PAGE_URL;

  const sent: SentMail[] = [];
  const showOutbox = () => {
    outboxList.replaceChildren(
      ...sent.map((mail) =>
        createElement('li', { text: `To ${mail.to}: ${mail.subject}: ${mail.body}` }),
      ),
    );
    outboxCount.textContent =
      sent.length === 0 ? 'Outbox: empty, nothing was sent.' : `Outbox: ${sent.length} sent.`;
    root.dataset.sent = String(sent.length);
  };
  showOutbox();
  let agent: Agent | undefined;

  runButton.addEventListener('click', () => {
    agent ??= createFlowAgent(settings, (mail) => {
      sent.push(mail);
      showOutbox();
    });
    void play(agent);
  });

  async function play(current: Agent): Promise<void> {
    runButton.disabled = true;
    root.dataset.state = 'running';
    steps.replaceChildren();
    refusal.replaceChildren();
    delete refusal.dataset.rule;
    answer.textContent = '';
    try {
      const run = current.run(EXFILTRATION_REQUEST, { labels: { confidentiality: 'private' } });
      for await (const event of run) showEvent(event);
      const result = await run.result;
      answer.textContent = result.text;
      // The run's labels as the agent worker stored them: which untrusted sources it saw.
      const [record] = (
        await current.memory.listRuns({ conversationId: result.conversationId })
      ).filter((each) => each.id === result.runId);
      showSources(record?.flow?.sources ?? []);
      root.dataset.state = 'done';
    } catch (error) {
      answer.textContent = `The run failed: ${error instanceof Error ? error.message : String(error)}`;
      root.dataset.state = 'error';
    } finally {
      runButton.disabled = false;
    }
  }

  function showEvent(event: AgentEvent): void {
    if (event.type === 'tool-call') {
      steps.append(
        createElement('li', {
          text: `The model calls ${event.toolName} ${formatValue(event.arguments ?? event.argumentsText)}`,
          attributes: { 'data-tool': event.toolName },
        }),
      );
    } else if (event.type === 'tool-result' && event.ok) {
      const label = event.toolName === 'fetch_page' ? ' (untrusted: anyone can write a page)' : '';
      steps.append(createElement('li', { text: `${event.toolName} answered${label}.` }));
    } else if (event.type === 'tool-result') {
      const flow = event.flow;
      steps.append(
        createElement('li', {
          className: 'flow-refused',
          text: `${event.toolName} did not run: ${event.error.code}.`,
        }),
      );
      if (event.error.code !== 'flow-refused' || !flow) return;
      refusal.dataset.rule = flow.rule;
      refusal.replaceChildren(
        createElement('strong', {
          text: `Refused: ${event.toolName} → ${flow.destination ?? '?'}`,
        }),
        createElement('span', { text: ` Rule: ${flow.rule}.` }),
        createElement('span', {
          text: ` The context held: ${[...flow.confidentiality, flow.integrity].join(', ')}.`,
        }),
        createElement('span', { className: 'flow-message', text: ` ${event.error.message}` }),
      );
    }
  }

  function showSources(sources: readonly FlowSource[]): void {
    const names = sources.map((source) => `${source.name ?? source.kind} (${source.kind})`);
    refusal.append(
      createElement('span', {
        className: 'flow-sources',
        text: ` Untrusted in the context: ${names.join(', ') || 'nothing'}.`,
      }),
    );
  }
}
