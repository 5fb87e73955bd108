/**
 * The agent of the information-flow panel (issue #50): an agent of its own, so its `flow`
 * policy governs only this scenario (under it, the main chat's MCP tools, which are sinks,
 * would wait or be refused after any untrusted data). Its two page tools: `fetch_page`, a
 * scripted web page, untrusted like any fetched content, and `send_email`, a sink whose
 * destination is the recipient, which writes to the panel's outbox.
 */
import { type Agent, createAgent, type Tool, tool } from 'airlock-agents';
import { z } from 'zod';
import type { ModelSettings } from '../demo-agent';
import { OFFSITE_PAGE_TEXT, OFFSITE_PAGE_URL, OWN_ADDRESS } from '../shared/exfiltration-scenario';

/** The IndexedDB database of this panel's runs, apart from the chat's. */
export const FLOW_DATABASE = 'airlock-demo-flow';

/** A mail `send_email` delivered: what the outbox shows. */
export interface SentMail {
  readonly to: string;
  readonly subject: string;
  readonly body: string;
}

const INSTRUCTIONS =
  'You are a concise assistant. To read a web page call fetch_page; to send an email call send_email.';

/** The panel's tools: a scripted page (untrusted output) and a mail sink into `outbox`. */
export function createFlowTools(outbox: (mail: SentMail) => void): readonly Tool[] {
  const fetchPage = tool({
    name: 'fetch_page',
    description: 'Fetches a web page and returns its text.',
    parameters: z.object({ url: z.string().url().max(2000) }),
    // What any page says is written by whoever runs the site: untrusted, as by default.
    outputLabel: { integrity: 'untrusted', confidentiality: 'public' },
    needsApproval: false,
    // Scripted: the demo reaches no network. Any other address is "not found".
    execute: ({ url }) => {
      if (url !== OFFSITE_PAGE_URL) throw new Error(`No page at ${url} in this demo.`);
      return OFFSITE_PAGE_TEXT;
    },
  });
  const sendEmail = tool({
    name: 'send_email',
    description: 'Sends an email.',
    parameters: z.object({
      to: z.string().email().max(320),
      subject: z.string().max(200),
      body: z.string().max(10_000),
    }),
    // A sink: data leaves through it, to the recipient.
    sink: ({ to }) => `email:${to}`,
    needsApproval: false,
    execute: ({ to, subject, body }) => {
      outbox({ to, subject, body });
      return `sent to ${to}`;
    },
  });
  return [fetchPage, sendEmail];
}

/**
 * An agent whose flow policy refuses a sink after untrusted data, and lets private data be
 * mailed only to the user's own address.
 */
export function createFlowAgent(settings: ModelSettings, outbox: (mail: SentMail) => void): Agent {
  return createAgent({
    worker: () => new Worker(new URL('../agent.worker.ts', import.meta.url), { type: 'module' }),
    model: { baseURL: settings.baseURL, model: settings.model },
    instructions: INSTRUCTIONS,
    tools: createFlowTools(outbox),
    memory: { database: FLOW_DATABASE },
    flow: {
      untrustedToSink: 'refuse',
      allowedDestinations: { private: [`email:${OWN_ADDRESS}`] },
    },
  });
}
