/**
 * Whether this browser's WebAssembly has memory64, which wllama's build needs (WebKitGTK
 * 2.50 has none: there wllama runs only from its compat build). Asked once per call site.
 */
export function hasMemory64(): boolean {
  try {
    new WebAssembly.Memory({
      address: 'i64',
      initial: 1n,
    } as unknown as WebAssembly.MemoryDescriptor);
    return true;
  } catch {
    return false;
  }
}
