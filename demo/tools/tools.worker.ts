/** The demo's sandbox tool worker entry (worker tier): weather, calculator, slow report. */
import { serveTools } from 'airlock-agents/sandbox';
import { createSandboxTools } from './sandbox-tools';

serveTools(createSandboxTools());
