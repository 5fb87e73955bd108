/**
 * `fetch_headline`, the tool of the demo's iframe-tier worker. The headline is invented
 * (the sandbox may reach no server: its `allowedOrigins` is empty); the point is the
 * report of what the sandbox could reach.
 */
import { type Tool, tool } from 'airlock-agents/sandbox';
import { z } from 'zod';
import { probeIsolation } from './isolation-probe';

const TEMPLATES = [
  'Scientists report surprising progress in {topic}',
  'Ten things nobody tells you about {topic}',
  'Local town goes all in on {topic}',
  'Is {topic} about to change everything? Experts are split',
  'The quiet revolution in {topic}, explained',
];

/** An invented headline about `topic`, the same one every time. */
export function inventHeadline(topic: string): string {
  let hash = 0;
  for (const char of topic.toLowerCase()) hash = (hash * 31 + (char.codePointAt(0) ?? 0)) % 9973;
  const template = TEMPLATES[hash % TEMPLATES.length] ?? '{topic} in the news';
  return template.replace('{topic}', topic);
}

/** The headline tool; `appUrl` is a URL on the app's server that the sandbox tries to reach. */
export function createHeadlineTool(appUrl: string): Tool {
  return tool({
    name: 'fetch_headline',
    description:
      "An invented news headline about a topic. Runs in an isolated sandbox and reports what it could reach (origin, IndexedDB, the app's server).",
    parameters: z.object({ topic: z.string().min(1).max(60).describe('e.g. "space"') }),
    execute: async ({ topic }) => ({
      topic,
      headline: inventHeadline(topic),
      sandbox: await probeIsolation(appUrl),
    }),
  });
}
