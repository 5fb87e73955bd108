// The first model call sent before its context is confirmed, replaced when that context was stale.
import type { ChatModel, ModelRequest, ModelStreamPart } from '../../model/chat-model';
import type { ModelRouteChoice } from '../../protocol/model-routes';

/**
 * `model`, whose first stream sends its request at once but yields nothing until `confirm`
 * settles. When `confirm` gives a request of its own (the first was built from a context
 * found out of date), the first stream is cancelled and that request is sent in its place;
 * when it rejects, the first stream is cancelled and the stream fails with its reason.
 * Nothing of a cancelled response ever reaches the caller. Later streams are `model`'s own.
 */
export function confirmedFirstCall(
  model: ChatModel,
  confirm: Promise<ModelRequest | undefined>,
): ChatModel {
  let first = true;
  // Awaited by the first stream; never, when the run ends before its first call.
  confirm.catch(() => undefined);
  return {
    name: model.name,
    complete: (request, options) => model.complete(request, options),
    stream(request, options) {
      if (!first) return model.stream(request, options);
      first = false;
      return confirmedStream(model, request, options, confirm);
    },
  };
}

async function* confirmedStream(
  model: ChatModel,
  request: ModelRequest,
  options: Parameters<ChatModel['stream']>[1],
  confirm: Promise<ModelRequest | undefined>,
): AsyncGenerator<ModelStreamPart> {
  const sent = new AbortController();
  const abort = () => sent.abort(options.signal.reason);
  if (options.signal.aborted) abort();
  options.signal.addEventListener('abort', abort, { once: true });
  // A router's choice for the first response is held with its parts: told once the request
  // is confirmed, never for a response that is replaced.
  let choice: ModelRouteChoice | undefined;
  const parts = model
    .stream(request, {
      ...options,
      signal: sent.signal,
      onRoute: (chosen) => {
        choice = chosen;
      },
    })
    [Symbol.asyncIterator]();
  // Sends the request; its first part (or failure) waits here until the request is confirmed.
  const head = parts.next();
  head.catch(() => undefined);
  let done = false;
  try {
    let instead: ModelRequest | undefined;
    try {
      instead = await confirm;
    } catch (error) {
      sent.abort(error);
      throw error;
    }
    if (instead) {
      sent.abort(new DOMException('The request was built from a stale context.', 'AbortError'));
      await head.catch(() => undefined);
      yield* model.stream(instead, options);
      return;
    }
    let next = await head;
    if (choice) await options.onRoute?.(choice);
    for (; !next.done; next = await parts.next()) yield next.value;
    done = true;
  } finally {
    options.signal.removeEventListener('abort', abort);
    // Closes the first response when it was cancelled or left before its end.
    if (!done) {
      sent.abort();
      await parts.return?.(undefined).catch(() => undefined);
    }
  }
}
