// What every contestant module exports: set up once per page (not measured), then runs
// (measured), each a new conversation.

/** What a contestant is given to set up. */
export interface ContestantSetup {
  /** The fake model server session's OpenAI base URL. */
  readonly baseURL: string;
  /** A fresh IndexedDB database name (only Airlock stores anything). */
  readonly database: string;
  /**
   * Starts the contestant's worker, if it has one. The harness owns the
   * `new Worker(new URL(…))` calls so a contestant module bundles alone without its worker.
   */
  readonly createWorker?: () => Worker;
  /**
   * Every run goes on with one conversation, as a chat's follow-ups do (`bench:lab:first-text
   * --warm`). Only Airlock heeds it: the others send each run without history.
   */
  readonly oneConversation?: boolean;
}

/** What a run reports back to the harness as it streams. */
export interface RunHooks {
  /** Called for every text delta, as the page receives it. */
  onText(delta: string): void;
}

/** What a finished run produced, to check against the scenario. */
export interface RunOutcome {
  readonly finalText: string;
  readonly toolCalls: number;
  readonly steps: number;
}

/** A contestant, set up, ready for runs. */
export interface Contestant {
  /** Runs `input` as the first message of a new conversation, to the final answer. */
  run(input: string, hooks: RunHooks): Promise<RunOutcome>;
  /** Releases workers and clients. */
  dispose(): void;
}

/** A contestant module's export. */
export type PrepareContestant = (setup: ContestantSetup) => Promise<Contestant>;
