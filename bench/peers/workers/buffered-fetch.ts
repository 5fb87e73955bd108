// For the delivery measure only: `fetch` reads each streamed response whole, then hands it
// on one SSE event per chunk, so the model stream (its server, the network, and the
// `openai` parser's cost on coalesced reads) is not what limits events per second.

/** Replaces this worker's `fetch`; call before any model client is created. */
export function installBufferedFetch(): void {
  const networkFetch = globalThis.fetch.bind(globalThis);
  globalThis.fetch = async (input, init) => {
    const response = await networkFetch(input, init);
    if (!response.headers.get('content-type')?.includes('text/event-stream')) return response;
    const encoder = new TextEncoder();
    const events = (await response.text()).split(/(?<=\n\n)/);
    let next = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const event = events[next++];
        if (event === undefined) controller.close();
        else controller.enqueue(encoder.encode(event));
      },
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
