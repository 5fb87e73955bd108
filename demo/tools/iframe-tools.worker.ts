/**
 * The demo's iframe-tier tool worker entry: it runs inside a sandboxed iframe with an
 * opaque origin, so it reports `origin "null"` and no IndexedDB.
 */
import { serveTools } from 'airlock-agents/sandbox';
import { createHeadlineTool } from './headline-tool';

// This module's own URL is on the app's server: the one place a probe can aim at.
serveTools([createHeadlineTool(import.meta.url)]);
