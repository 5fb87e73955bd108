// Prints the minified and gzipped size of what Airlock puts on the page and in its worker.
import { bundleEntry, ENTRIES } from './bundle-entries.mjs';

for (const name of /** @type {(keyof typeof ENTRIES)[]} */ (Object.keys(ENTRIES))) {
  const { bytes, gzipBytes, lazyGzipBytes } = await bundleEntry(name);
  const lazy =
    lazyGzipBytes > 0 ? `  (+ ${(lazyGzipBytes / 1024).toFixed(1)} KB gzip loaded on use)` : '';
  console.log(
    `${name.padEnd(7)} ${(bytes / 1024).toFixed(1).padStart(7)} KB min  ${(gzipBytes / 1024).toFixed(1).padStart(6)} KB gzip (${gzipBytes} B)${lazy}`,
  );
}
