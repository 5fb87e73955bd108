import { createAgent, tool } from 'airlock-agents';
import { z } from 'zod';

document.querySelector<HTMLDivElement>('#app')!.innerHTML = `
  <form id="ask">
    <input id="question" placeholder="What time is it in Tokyo?" autocomplete="off" required />
    <button id="send">Ask</button>
  </form>
  <ul id="tools"></ul>
  <p id="answer"></p>
`;
const form = document.querySelector<HTMLFormElement>('#ask')!;
const question = document.querySelector<HTMLInputElement>('#question')!;
const send = document.querySelector<HTMLButtonElement>('#send')!;
const tools = document.querySelector<HTMLUListElement>('#tools')!;
const answer = document.querySelector<HTMLParagraphElement>('#answer')!;

// A page tool runs on the main thread: it can use what only the browser knows.
const getTime = tool({
  name: 'get_time',
  description: "The current date and time, in the user's time zone or the one given.",
  parameters: z.object({
    timeZone: z.string().optional().describe('An IANA time zone, e.g. Asia/Tokyo'),
  }),
  execute: ({ timeZone }) =>
    new Date().toLocaleString('en-GB', { timeZone, timeZoneName: 'longOffset' }),
});

const agent = createAgent({
  worker: () => new Worker(new URL('./agent.worker.ts', import.meta.url), { type: 'module' }),
  model: { baseURL: '/llm/v1', model: 'gpt-4o-mini' },
  instructions: 'You are a concise assistant.',
  tools: [getTime],
});

form.addEventListener('submit', async (submit) => {
  submit.preventDefault();
  send.disabled = true;
  tools.replaceChildren();
  answer.textContent = '';
  try {
    for await (const event of agent.run(question.value)) {
      if (event.type === 'text-delta') answer.textContent += event.delta;
      if (event.type === 'tool-call') {
        const item = document.createElement('li');
        item.textContent = `${event.toolName} ${event.argumentsText}`;
        tools.append(item);
      }
      if (event.type === 'run-error') answer.textContent = `Error: ${event.error.message}`;
    }
  } finally {
    send.disabled = false;
  }
});
