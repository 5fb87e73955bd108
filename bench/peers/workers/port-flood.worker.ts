// Raw MessagePort throughput: on a port from the page, posts `count` small messages shaped
// like Airlock's text-delta events as fast as it can.
self.onmessage = ({ data, ports }: MessageEvent<{ count: number }>) => {
  const port = ports[0];
  if (!port) return;
  for (let i = 0; i < data.count; i++) {
    port.postMessage({ type: 'text-delta', step: 1, delta: ' word' });
  }
};
