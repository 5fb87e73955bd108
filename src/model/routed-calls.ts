// The model router's routing (a lazy chunk, see route-model.ts): per call, the first eligible
// route, the fallback on a fault before content, and the choice told through `onRoute`.
import { AirlockError, isAirlockError, toErrorData } from '../errors/airlock-error';
import { isRecord } from '../errors/field-checks';
import type { Usage } from '../protocol/chat';
import type { ErrorData } from '../protocol/errors';
import { MAX_LEVEL_CHARS } from '../protocol/labels';
import type { PassedOverRoute } from '../protocol/model-routes';
import { realTimers } from '../timing/timers';
import { waitFor } from '../timing/wait';
import type { ChatModel, ModelCallOptions, ModelRequest, ModelStreamPart } from './chat-model';
import { estimateRequestTokens } from './estimate-tokens';
import type { ModelRoute, NamedRoute, RouteOptions, RouteSettings } from './model-route';
import { isContent } from './stream-attempts';

/** Most routes one router takes: more is a list built by mistake, not a choice of models. */
const MAX_ROUTES = 32;

/** The router of `route(routes, options)`, its routes and options checked (`invalid-options`). */
export function checkedRouter(
  routes: readonly ModelRoute[],
  options: RouteOptions,
): Pick<ChatModel, 'stream' | 'complete'> {
  const checked = checkedRoutes(routes);
  const settings: RouteSettings = {
    availableTimeoutMs: options.availableTimeoutMs ?? 2_000,
    timers: options.timers ?? realTimers,
  };
  if (!(Number.isFinite(settings.availableTimeoutMs) && settings.availableTimeoutMs > 0))
    throw invalid('`availableTimeoutMs` must be a positive number of milliseconds.');
  return {
    stream: (request, callOptions) => routedStream(checked, settings, request, callOptions),
    complete: (request, completeOptions) =>
      routedComplete(checked, settings, request, completeOptions),
  };
}

/** One streamed call, routed (see `route`). */
async function* routedStream(
  routes: readonly NamedRoute[],
  settings: RouteSettings,
  request: ModelRequest,
  callOptions: ModelCallOptions,
): AsyncIterable<ModelStreamPart> {
  const passedOver: PassedOverRoute[] = [];
  let lastFault: AirlockError | undefined;
  for await (const candidate of eligible(
    routes,
    settings,
    request,
    callOptions.signal,
    passedOver,
  )) {
    // Parts before the first content (none, usually) wait, so a fault can still pass over.
    const held: ModelStreamPart[] = [];
    let told = false;
    const tell = async () => {
      told = true;
      await callOptions.onRoute?.({ route: candidate.name, passedOver: [...passedOver] });
    };
    try {
      for await (const part of candidate.model.stream(request, callOptions)) {
        if (told) {
          yield part;
          continue;
        }
        held.push(part);
        if (!isContent(part)) continue;
        await tell();
        yield* held;
      }
      if (!told) {
        // Ended quietly by an abort before anything came: no route answered.
        if (callOptions.signal.aborted && held.length === 0) return;
        await tell();
        yield* held;
      }
      return;
    } catch (error) {
      if (told || callOptions.signal.aborted || !isFault(error)) throw error;
      lastFault = error as AirlockError;
      passedOver.push({ route: candidate.name, reason: 'failed', error: toErrorData(error) });
    }
  }
  if (callOptions.signal.aborted) return;
  throw noRoute(passedOver, lastFault);
}

/** One `complete()` call, routed the same way. */
async function routedComplete(
  routes: readonly NamedRoute[],
  settings: RouteSettings,
  request: ModelRequest,
  completeOptions: { readonly signal: AbortSignal },
): Promise<{ text: string; usage: Usage }> {
  const passedOver: PassedOverRoute[] = [];
  let lastFault: AirlockError | undefined;
  for await (const candidate of eligible(
    routes,
    settings,
    request,
    completeOptions.signal,
    passedOver,
  )) {
    try {
      return await candidate.model.complete(request, completeOptions);
    } catch (error) {
      if (completeOptions.signal.aborted || !isFault(error)) throw error;
      lastFault = error as AirlockError;
      passedOver.push({ route: candidate.name, reason: 'failed', error: toErrorData(error) });
    }
  }
  // An abort ends the call as the signal says, the way `fetch` rejects with its reason.
  if (completeOptions.signal.aborted) throw completeOptions.signal.reason;
  throw noRoute(passedOver, lastFault);
}

/**
 * Codes of faults that pass a route over for the next while it has streamed no content:
 * the route's endpoint or engine cannot serve now, not the request. `input-refused` (400/413,
 * the request refused for what it carries) is left out on purpose: the next route would be
 * sent the same input the deployment refused (a size its proxy caps, content it declines),
 * and the loop must see the refusal to keep the turn as refused rather than resend it. So
 * are auth and the proxy's policy refusals: they are the deployment's mistakes to show.
 */
function isFault(error: unknown): boolean {
  if (!isAirlockError(error)) return false;
  switch (error.code) {
    case 'model-unreachable':
    case 'model-rate-limited':
    case 'model-unavailable':
    case 'model-stream-idle':
      return true;
    case 'model-http-error': {
      const status = error.details.status;
      return typeof status === 'number' && status >= 500;
    }
    default:
      return false;
  }
}

/** Yields each eligible route in order, recording every one passed over in `passedOver`. */
async function* eligible(
  routes: readonly NamedRoute[],
  settings: RouteSettings,
  request: ModelRequest,
  signal: AbortSignal,
  passedOver: PassedOverRoute[],
): AsyncGenerator<NamedRoute> {
  const needs = needsOf(request);
  let tokens: number | undefined;
  for (const candidate of routes) {
    const { name, accepts } = candidate;
    if (needs.images && accepts?.images === false) {
      passedOver.push({ route: name, reason: 'images' });
      continue;
    }
    if (needs.tools && accepts?.tools === false) {
      passedOver.push({ route: name, reason: 'tools' });
      continue;
    }
    const refused = accepts?.confidentiality && refusedLevels(request, accepts.confidentiality);
    if (refused && refused.length > 0) {
      passedOver.push({ route: name, reason: 'confidentiality', levels: refused });
      continue;
    }
    if (candidate.maxContextTokens !== undefined) {
      tokens ??= estimateRequestTokens(request);
      if (tokens > candidate.maxContextTokens) {
        const { maxContextTokens } = candidate;
        passedOver.push({ route: name, reason: 'context', tokens, maxContextTokens });
        continue;
      }
    }
    const declined = whenVerdict(name, () => candidate.when?.(request) ?? true);
    if (declined) {
      passedOver.push({ route: name, reason: 'declined', ...declined });
      continue;
    }
    const unavailable = await availability(candidate, signal, settings);
    if (signal.aborted) return;
    if (unavailable) {
      passedOver.push({ route: name, reason: 'unavailable', ...unavailable });
      continue;
    }
    yield candidate;
  }
}

/** What a request needs of a model beyond text: an image in a user message, tools offered. */
function needsOf(request: ModelRequest): { images: boolean; tools: boolean } {
  const images = request.messages.some(
    (message) =>
      message.role === 'user' &&
      typeof message.content !== 'string' &&
      message.content.some((part) => part.type === 'image'),
  );
  return { images, tools: request.tools.length > 0 };
}

/**
 * The request's levels a route that accepts `accepted` may not be sent; an unlabelled request
 * is refused as `unlabelled`: what it carries is not known, so it is not sent anywhere restricted.
 */
function refusedLevels(request: ModelRequest, accepted: readonly string[]): readonly string[] {
  const label = request.label;
  if (!label) return ['unlabelled'];
  return label.confidentiality.filter((level) => level !== 'public' && !accepted.includes(level));
}

/** Undefined when `when` answered `true`; else a pass-over's fields (the error, if it threw). */
function whenVerdict(route: string, ask: () => unknown): { error?: ErrorData } | undefined {
  try {
    return ask() === true ? undefined : {};
  } catch (error) {
    return { error: ruleError(route, 'when', error) };
  }
}

/** Undefined when the route is available; else a pass-over's fields. */
async function availability(
  candidate: NamedRoute,
  signal: AbortSignal,
  settings: RouteSettings,
): Promise<{ error?: ErrorData } | undefined> {
  const { available, name } = candidate;
  const { availableTimeoutMs: timeoutMs, timers } = settings;
  if (!available) return undefined;
  try {
    const waited = await waitFor(Promise.resolve(available()), { signal, timeoutMs, timers });
    if (waited.outcome === 'settled') return waited.value === true ? undefined : {};
    if (waited.outcome === 'aborted') return {};
    return {
      error: {
        code: 'model-unavailable',
        message: `Route "${name}": available() did not answer within ${timeoutMs} ms.`,
      },
    };
  } catch (error) {
    return { error: ruleError(name, 'available', error) };
  }
}

function ruleError(route: string, rule: string, error: unknown): ErrorData {
  const reason = error instanceof Error ? error.message : String(error);
  return { code: 'invalid-options', message: `Route "${route}": ${rule}() threw: ${reason}` };
}

/**
 * The error when no route answered: the last route's own fault when one was tried (its code
 * kept, so a network wait or a rate limit around the router still reads it), else
 * `no-model-route`; both carry every route passed over in `details.routes`.
 */
function noRoute(
  passedOver: readonly PassedOverRoute[],
  lastFault: AirlockError | undefined,
): AirlockError {
  const routes = [...passedOver];
  if (lastFault)
    return new AirlockError(lastFault.code, lastFault.message, {
      details: { ...lastFault.details, routes },
      cause: lastFault.cause,
    });
  const reasons = routes.map((item) => `${item.route}: ${item.reason}`).join('; ');
  return new AirlockError('no-model-route', `No model route could take this call (${reasons}).`, {
    details: { routes },
  });
}

/** The routes as given, checked once: a bad list fails `invalid-options` when the router is made. */
function checkedRoutes(routes: unknown): NamedRoute[] {
  if (!Array.isArray(routes) || routes.length === 0)
    throw invalid('`route(routes)` takes a non-empty array of routes.');
  if (routes.length > MAX_ROUTES)
    throw invalid(`\`route(routes)\` takes at most ${MAX_ROUTES} routes, not ${routes.length}.`);
  const names = new Set<string>();
  return routes.map((value: unknown, index) => {
    const at = `routes[${index}]`;
    if (!isRecord(value)) throw invalid(`${at} is not a route object.`);
    const model = value.model;
    if (
      !isRecord(model) ||
      typeof model.stream !== 'function' ||
      typeof model.complete !== 'function'
    )
      throw invalid(`${at}.model is not a ChatModel (it needs stream() and complete()).`);
    const name = value.name ?? model.name;
    if (typeof name !== 'string' || name === '' || name.length > 200)
      throw invalid(`${at} needs a name (its own or its model's) of 1 to 200 characters.`);
    if (names.has(name)) throw invalid(`${at} is named "${name}" like an earlier route.`);
    names.add(name);
    for (const field of ['when', 'available'] as const)
      if (value[field] !== undefined && typeof value[field] !== 'function')
        throw invalid(`${at}.${field} must be a function.`);
    const max = value.maxContextTokens;
    if (max !== undefined && !(Number.isSafeInteger(max) && (max as number) > 0))
      throw invalid(`${at}.maxContextTokens must be a positive integer.`);
    const accepts = value.accepts;
    const flags = isRecord(accepts) ? [accepts.images, accepts.tools] : [];
    if (
      accepts !== undefined &&
      (!isRecord(accepts) ||
        !flags.every((flag) => flag === undefined || typeof flag === 'boolean') ||
        !isLevelList(accepts.confidentiality))
    )
      throw invalid(
        `${at}.accepts must be { images?: boolean, tools?: boolean, confidentiality?: string[] } (levels of 1 to ${MAX_LEVEL_CHARS} characters, at most ${MAX_ROUTES * 2}).`,
      );
    return { ...(value as unknown as ModelRoute), name };
  });
}

/** Absent, or a short list of level names (a route names the few levels it may see). */
function isLevelList(levels: unknown): boolean {
  if (levels === undefined) return true;
  return (
    Array.isArray(levels) &&
    levels.length <= MAX_ROUTES * 2 &&
    levels.every(
      (level) => typeof level === 'string' && level !== '' && level.length <= MAX_LEVEL_CHARS,
    )
  );
}

function invalid(message: string): AirlockError {
  return new AirlockError('invalid-options', message);
}
