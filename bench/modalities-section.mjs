// The BENCHMARKS.md section on structured output and image input (bench/results/modalities.json).

/**
 * @typedef {{ n: number; p50: number; p95: number; min: number; max: number }} Summary
 * @typedef {{ wallMs: Summary; firstOutputMs: Summary; longTaskMs: Summary }} Figures
 * @typedef {{
 *   date: string;
 *   machine?: { loadAverage?: { start?: number[] } };
 *   runs: number;
 *   figures: Record<string, Record<string, Figures>>;
 *   failures: { contestant: string; kind: string; message: string }[];
 * }} ModalitiesFile
 */

export const MODALITIES_HEADING = '## Structured output and images';

const LABELS = /** @type {Record<string, string>} */ ({
  airlock: 'Airlock',
  'vercel-ai': 'Vercel AI SDK',
});

const cell = (/** @type {Summary | undefined} */ summary) =>
  summary ? `${summary.p50} (p95 ${summary.p95})` : '–';

/** @param {ModalitiesFile | undefined} results */
export function modalitiesSection(results) {
  if (!results) return `${MODALITIES_HEADING}\n\nNo figures yet: \`npm run bench -- peers\`.`;
  const rows = [];
  for (const [kind, byContestant] of Object.entries(results.figures)) {
    for (const [name, figures] of Object.entries(byContestant)) {
      rows.push(
        `| ${kind} | ${LABELS[name] ?? name} | ${cell(figures.wallMs)} | ${cell(figures.firstOutputMs)} | ${cell(figures.longTaskMs)} |`,
      );
    }
  }
  const load =
    results.machine?.loadAverage?.start?.map((value) => value.toFixed(2)).join(', ') ?? '?';
  const failed =
    results.failures.length > 0
      ? `\n\nFailed: ${results.failures.map((failure) => `${failure.contestant} ${failure.kind} (${failure.message})`).join('; ')}.`
      : '';
  return `${MODALITIES_HEADING}

The same fake model server, the same answer, Airlock beside the Vercel AI SDK (\`streamText\`),
${results.runs} measured runs each after a warm-up, on a fresh page per contestant (load average
over 1, 5 and 15 minutes at the start: ${load}). **structured-output**: \`agent.run(input, { output: zodSchema })\` against
\`streamText({ output: Output.object({ schema }) })\`, the same zod schema (nested objects, an
array, enums), a 1.8 KB pretty-printed answer streamed in about 230 chunks; every run's parsed
object is checked. **image**: one ~256 KB PNG and a question; Airlock stores it (once, by its
SHA-256) in IndexedDB in its worker and sends it as a data URL, the AI SDK base64-encodes it on
the page; every request is checked to carry it as an \`image_url\` data URL. Times in ms, p50
(p95); "first output" is the first partial object or the first text delta at the page.

| run | contestant | wall | first output | long-task time on the page |
|---|---|---|---|---|
${rows.join('\n')}${failed}`;
}
