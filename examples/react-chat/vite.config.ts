import { airlockProxy } from 'airlock-agents/proxy';
import { defineConfig } from 'vite';

export default defineConfig({
  // React's automatic JSX runtime, without a plugin: Vite's own transform does it.
  oxc: { jsx: { runtime: 'automatic' } },
  plugins: [
    // Serves /llm/v1 from this dev server and adds the key there: the page never sees it.
    airlockProxy({
      upstream: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
      apiKey: process.env.OPENAI_API_KEY ?? '',
      allowedModels: ['gpt-4o-mini'],
      // Anyone who can reach this server may spend through it: fine on your machine. In
      // production, pass `authorize` to check your own users (docs/deployment.md).
      allowAnonymous: true,
    }),
  ],
});
