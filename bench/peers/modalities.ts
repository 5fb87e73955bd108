// Structured output and an image input, Airlock beside the Vercel AI SDK on the same fake
// model server: the same scripted answer, the same schema, the same image bytes. The page
// harness (main.ts) exposes `bench.modalities`; the Node driver calls it after the
// conversation runs.
import { createOpenAI } from '@ai-sdk/openai';
import { Output, streamText } from 'ai';
import { createAgent } from 'airlock-agents';
import { createRemoteSession } from 'airlock-agents/testing/remote';
import { z } from 'zod';
import { observeLongTasks } from './probes';
import { INSTRUCTIONS, MODEL } from './scenario';

/** What the two runs are. */
export type ModalityKind = 'structured-output' | 'image';
export type ModalityContestant = 'airlock' | 'vercel-ai';

/** The structured answer: nested objects, an array, enums. */
const Report = z.object({
  title: z.string(),
  status: z.enum(['draft', 'final']),
  sections: z.array(
    z.object({ heading: z.string(), points: z.array(z.string()), risk: z.enum(['low', 'high']) }),
  ),
});

/** The answer the fake model streams (one word per chunk) for the structured run. */
export const REPORT: z.output<typeof Report> = {
  title: 'Quarterly research report',
  status: 'final',
  sections: Array.from({ length: 12 }, (_, index) => ({
    heading: `Topic ${index + 1}`,
    points: ['well documented', 'changed in 2024', 'needs a follow-up'],
    risk: index % 3 === 0 ? 'high' : 'low',
  })),
};

/** The image: a PNG header and ~256 KB of bytes, as a photo a user attaches might weigh. */
export const IMAGE_BYTES = 256 * 1024;
function imageBytes(): Uint8Array {
  const bytes = new Uint8Array(IMAGE_BYTES);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let index = 8; index < bytes.length; index++) bytes[index] = (index * 31) & 0xff;
  return bytes;
}
const IMAGE_ANSWER = 'The picture shows a chart of the four topics.';

/** One measured run. */
export interface ModalitySample {
  readonly wallMs: number;
  /** Until the first partial object (structured) or the first text (image). */
  readonly firstOutputMs: number;
  readonly longTaskMs: number;
}

const longTasks = observeLongTasks();

/**
 * `runs` runs of one kind by one contestant (after a warm-up run), each checked: the
 * parsed object equals `REPORT`, or the request carried the image as a data URL and the
 * answer came back. Throws when a run is wrong.
 */
export async function runModality(
  modelServerUrl: string,
  contestant: ModalityContestant,
  kind: ModalityKind,
  runs: number,
): Promise<ModalitySample[]> {
  const answer = kind === 'structured-output' ? JSON.stringify(REPORT, null, 1) : IMAGE_ANSWER;
  const session = await createRemoteSession(
    modelServerUrl,
    Array.from({ length: runs + 1 }, () => ({ text: answer })),
  );
  const run =
    contestant === 'airlock' ? airlockRunner(session.baseURL) : vercelRunner(session.baseURL);
  const samples: ModalitySample[] = [];
  const image = imageBytes();
  try {
    for (let index = 0; index <= runs; index++) {
      let firstOutput = Number.NaN;
      const started = performance.now();
      const value = await run.once(kind, image, () => {
        if (Number.isNaN(firstOutput)) firstOutput = performance.now();
      });
      const ended = performance.now();
      if (kind === 'structured-output' && JSON.stringify(value) !== JSON.stringify(REPORT))
        throw new Error(
          `${contestant} parsed another object: ${JSON.stringify(value).slice(0, 80)}`,
        );
      if (kind === 'image' && value !== IMAGE_ANSWER)
        throw new Error(`${contestant} answered ${JSON.stringify(value)}`);
      // The first run warms the contestant up (its worker, the schema converter) and is not kept.
      if (index > 0)
        samples.push({
          wallMs: ended - started,
          firstOutputMs: firstOutput - started,
          longTaskMs: longTasks
            .between(started, ended)
            .reduce((total, entry) => total + entry.duration, 0),
        });
    }
    if (kind === 'image') {
      const bodies = (await session.requests()).map((request) => JSON.stringify(request.body));
      const sent = bodies.filter(
        (body) => body.includes('"image_url"') && body.includes('data:image/png;base64,'),
      );
      if (sent.length !== runs + 1)
        throw new Error(`${contestant}: ${sent.length} of ${runs + 1} requests carried the image`);
    }
  } finally {
    run.dispose();
  }
  return samples;
}

interface Runner {
  once(kind: ModalityKind, image: Uint8Array, onOutput: () => void): Promise<unknown>;
  dispose(): void;
}

function airlockRunner(baseURL: string): Runner {
  const agent = createAgent({
    worker: () =>
      new Worker(new URL('./workers/airlock-agent.worker.ts', import.meta.url), { type: 'module' }),
    model: { baseURL, model: MODEL },
    instructions: INSTRUCTIONS,
    memory: { database: `airlock-bench-${crypto.randomUUID()}`, tools: false, summarize: false },
  });
  return {
    async once(kind, image, onOutput) {
      const conversationId = crypto.randomUUID();
      if (kind === 'structured-output') {
        const run = agent.run('Write the report.', { output: Report, conversationId });
        for await (const event of run) if (event.type === 'output-delta') onOutput();
        return (await run.result).output;
      }
      const run = agent.run(
        [
          { type: 'text', text: 'What does this picture show?' },
          // A new Blob each run, as a user attaching a file would; the store keeps it once.
          { type: 'image', image: new Blob([image as BlobPart], { type: 'image/png' }) },
        ],
        { conversationId },
      );
      for await (const event of run) if (event.type === 'text-delta') onOutput();
      return (await run.result).text;
    },
    dispose: () => agent.dispose(),
  };
}

function vercelRunner(baseURL: string): Runner {
  const provider = createOpenAI({ baseURL, apiKey: 'bench' });
  return {
    async once(kind, image, onOutput) {
      if (kind === 'structured-output') {
        const result = streamText({
          model: provider.chat(MODEL),
          system: INSTRUCTIONS,
          prompt: 'Write the report.',
          output: Output.object({ schema: Report }),
          maxRetries: 0,
        });
        for await (const _partial of result.partialOutputStream) onOutput();
        return await result.output;
      }
      const result = streamText({
        model: provider.chat(MODEL),
        system: INSTRUCTIONS,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What does this picture show?' },
              { type: 'image', image, mediaType: 'image/png' },
            ],
          },
        ],
        maxRetries: 0,
      });
      for await (const _delta of result.textStream) onOutput();
      return await result.text;
    },
    dispose: () => {},
  };
}
