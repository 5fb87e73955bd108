// The model router's front, kept to a few lines: the routes are checked and routed by a chunk
// of its own (routed-calls.ts), loaded on the first call, so an agent worker's start carries
// nothing of the router (`npm run size` measures every export of the worker entry).
import { loadChunk } from '../runtime/load-chunk';
import type { ChatModel } from './chat-model';
import type { ModelRoute, RouteOptions } from './model-route';

export type { ModelRoute, RouteOptions } from './model-route';

/**
 * A `ChatModel` that answers each call with the first of `routes` that accepts what the
 * request needs (images, tools), fits its context, passes the route's `when` and is
 * `available`. A route that fails with a fault before it streamed any text, reasoning or tool
 * call is passed over for the next eligible one; after content, never (the caller must not see
 * a response twice), nor on abort. Which route answered is told through `onRoute`. None
 * eligible: `no-model-route`; every eligible one failed: the last failure, with `details.routes`.
 * A bad list or option fails every call with `invalid-options`, the first one included.
 */
export function route(routes: readonly ModelRoute[], options: RouteOptions = {}): ChatModel {
  let router: Promise<Pick<ChatModel, 'stream' | 'complete'>> | undefined;
  const load = () => {
    router ??= loadChunk('routed-calls', () => import('./routed-calls')).then((module) =>
      module.checkedRouter(routes, options),
    );
    return router;
  };
  return {
    name: typeof options.name === 'string' ? options.name : 'route',
    async *stream(request, callOptions) {
      yield* (await load()).stream(request, callOptions);
    },
    async complete(request, completeOptions) {
      return (await load()).complete(request, completeOptions);
    },
  };
}
