// The model router's front: the routes checked when it is made; the routing itself is a
// chunk of its own (routed-calls.ts), loaded on the first call, so a worker that never
// routes does not carry it.
import { AirlockError } from '../errors/airlock-error';
import { isRecord } from '../errors/field-checks';
import { loadChunk } from '../runtime/load-chunk';
import { realTimers } from '../timing/timers';
import type { ChatModel } from './chat-model';
import type { ModelRoute, NamedRoute, RouteOptions, RouteSettings } from './model-route';

export type { ModelRoute, RouteOptions } from './model-route';

/** Most routes one router takes: more is a list built by mistake, not a choice of models. */
const MAX_ROUTES = 32;

/**
 * A `ChatModel` that answers each call with the first of `routes` that accepts what the
 * request needs (images, tools), fits its context, passes the route's `when` and is
 * `available`. A route that fails with a fault before it streamed any text, reasoning or tool
 * call is passed over for the next eligible one; after content, never (the caller must not see
 * a response twice), nor on abort. Which route answered is told through `onRoute`. None
 * eligible: `no-model-route`; every eligible one failed: the last failure, with `details.routes`.
 * A bad list or option fails `invalid-options` here, when the router is made.
 */
export function route(routes: readonly ModelRoute[], options: RouteOptions = {}): ChatModel {
  const checked = checkedRoutes(routes);
  const settings: RouteSettings = {
    availableTimeoutMs: options.availableTimeoutMs ?? 2_000,
    timers: options.timers ?? realTimers,
  };
  if (!(Number.isFinite(settings.availableTimeoutMs) && settings.availableTimeoutMs > 0))
    throw invalid('`availableTimeoutMs` must be a positive number of milliseconds.');
  const routing = () => loadChunk('routed-calls', () => import('./routed-calls'));
  return {
    name: options.name ?? 'route',
    async *stream(request, callOptions) {
      yield* (await routing()).routedStream(checked, settings, request, callOptions);
    },
    async complete(request, completeOptions) {
      return (await routing()).routedComplete(checked, settings, request, completeOptions);
    },
  };
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
        !flags.every((flag) => flag === undefined || typeof flag === 'boolean'))
    )
      throw invalid(`${at}.accepts must be { images?: boolean, tools?: boolean }.`);
    return { ...(value as unknown as ModelRoute), name };
  });
}

function invalid(message: string): AirlockError {
  return new AirlockError('invalid-options', message);
}
