/**
 * A crash of WebKit's web process is told apart from a failed assertion: the driver's next
 * command throws `WebProcessCrashed`, which `scripts/test.mjs` runs a file again for (see
 * `scripts/crash-reruns.mjs`). The crash is a real one: the page's process is sent SIGABRT,
 * as a failed assertion of WebKit's own sends it (a SIGSEGV sent from outside is ignored
 * by JavaScriptCore's signal handler).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WebkitSession } from '../../scripts/browsers/webkit-session.mjs';
import { webkitOptions } from '../../scripts/browsers.mjs';
import { ENGINE_CRASH } from '../../scripts/crash-reruns.mjs';
import { processName, processTree } from '../setup/worker-threads.mjs';
import { ENGINE } from './engine';

/** Linux cuts a process's name to 15 characters. */
const WEB_PROCESS = 'WebKitWebProces';

let session: WebkitSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

async function startSession(): Promise<WebkitSession> {
  session = await WebkitSession.start(webkitOptions);
  await session.navigate('data:text/html,<title>crash</title>');
  return session;
}

/** The error the session's commands throw once they fail, polled until one does. */
async function firstFailure(started: WebkitSession): Promise<unknown> {
  const deadline = Date.now() + 30_000;
  let failure: unknown;
  while (Date.now() < deadline) {
    failure = await started.execute('return document.title;').then(
      () => undefined,
      (error: unknown) => error,
    );
    // MiniBrowser's line may reach the session's output a moment after the driver answers.
    if (failure instanceof Error && failure.name === ENGINE_CRASH) return failure;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return failure;
}

describe.runIf(ENGINE === 'webkit')("a crash of WebKit's web process", () => {
  it("makes the next command throw WebProcessCrashed, with MiniBrowser's line in its message", async () => {
    const started = await startSession();
    expect(await started.execute('return document.title;')).toBe('crash');
    const root = started.driverPid;
    if (root === undefined) throw new Error('The driver has no process id.');
    const pages = processTree(root).filter((pid) => processName(pid) === WEB_PROCESS);
    expect(pages.length).toBeGreaterThan(0);
    for (const pid of pages) process.kill(pid, 'SIGABRT');

    const failure = await firstFailure(started);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).name).toBe(ENGINE_CRASH);
    expect((failure as Error).message).toContain('WebProcess CRASHED');
  });

  it('leaves a WebDriver error of a live page a plain Error', async () => {
    const started = await startSession();
    const failure = await started.execute('throw new Error("refused");').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).name).toBe('Error');
    expect((failure as Error).message).toContain('refused');
  });
});
