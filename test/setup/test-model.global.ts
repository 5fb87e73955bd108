import { writeTestModel } from '../../scripts/build-test-model.mjs';

// The on-device model's tests load a GGUF the project builds itself (no registry package
// ships a small model): written before the run, deterministic, git-ignored.

/** Writes `test/fixtures/tiny-llama.gguf`, served to the browser tests by Vite. */
export default function setup(): void {
  writeTestModel();
}
