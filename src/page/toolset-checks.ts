/**
 * The checks of toolset options, made when an agent starts. The sandbox host and the
 * iframe tier themselves load only when an agent has toolsets, so these stay small and
 * free of them.
 */
import { AirlockError } from '../errors/airlock-error';
import type { ToolsetOptions } from './toolset-options';

/**
 * Checks one toolset's tier and how its workers start; a bad value is an
 * `invalid-options` error naming the toolset. Options come from app code that may not be
 * type-checked.
 */
export function checkToolsetOptions(toolset: ToolsetOptions): void {
  const isolation: unknown = toolset.isolation ?? 'worker';
  if (isolation === 'iframe') {
    parseWorkerUrl(toolset.name, toolset.workerUrl);
    for (const origin of toolset.allowedOrigins ?? []) toCspOrigin(toolset.name, origin);
    return;
  }
  if (isolation !== 'worker') {
    throw new AirlockError(
      'invalid-options',
      `Toolset "${toolset.name}": isolation must be "worker" or "iframe", not "${String(isolation)}".`,
    );
  }
  if (typeof toolset.worker !== 'function') {
    throw new AirlockError(
      'invalid-options',
      `Toolset "${toolset.name}": \`worker\` must be a function that returns a new Worker (or use isolation "iframe" with \`workerUrl\`).`,
    );
  }
}

/** An iframe toolset's `workerUrl`, checked: absolute http(s). */
export function parseWorkerUrl(toolset: string, workerUrl: unknown): URL {
  if (typeof workerUrl !== 'string' && !(workerUrl instanceof URL)) {
    throw new AirlockError(
      'invalid-options',
      `Toolset "${toolset}" uses isolation "iframe" and needs \`workerUrl\`, the URL of its tool worker module (with Vite: \`import url from './tools.worker.ts?worker&url'\`).`,
    );
  }
  let url: URL;
  try {
    url = new URL(workerUrl, globalThis.location?.href);
  } catch (error) {
    throw new AirlockError(
      'invalid-options',
      `Toolset "${toolset}": workerUrl "${String(workerUrl)}" is not a valid URL.`,
      { cause: error },
    );
  }
  // The opaque-origin sandbox can only import over the network, with CORS.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AirlockError(
      'invalid-options',
      `Toolset "${toolset}": workerUrl must be an http(s) URL, not "${url.protocol}".`,
    );
  }
  return url;
}

/** Origins only, in a form that cannot smuggle CSP syntax (`;`, quotes, spaces) into the policy. */
const CSP_ORIGIN =
  /^(https?|wss?):\/\/(\[[0-9a-f:.]+\]|(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*)(:\d{1,5})?$/;

export function toCspOrigin(toolset: string, value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const isOrigin =
    url !== undefined &&
    url.pathname === '/' &&
    url.search === '' &&
    url.hash === '' &&
    url.username === '' &&
    url.password === '' &&
    CSP_ORIGIN.test(url.origin);
  if (!url || !isOrigin) {
    throw new AirlockError(
      'invalid-options',
      `Toolset "${toolset}": allowedOrigins entry "${value}" is not an origin like "https://api.example.com".`,
    );
  }
  return url.origin;
}
