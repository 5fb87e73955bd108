import type { Timers } from '../timing/timers';
import type { ChatModel, ModelRequest } from './chat-model';

/** One model a router (`route([...])`) may answer with, and the rules that say when. */
export interface ModelRoute {
  readonly model: ChatModel;
  /** Names the route in `model-route` events and errors; the model's `name` when absent. Unique. */
  readonly name?: string;
  /**
   * The app's rule: the route is taken only when it answers `true` for the request (a throw
   * passes the route over, like `false`). The place for a rule on what the request carries.
   */
  readonly when?: (request: ModelRequest) => boolean;
  /** Whether the model can serve now (an engine loaded, a quota left); asked per call, bounded by `availableTimeoutMs`. */
  readonly available?: () => boolean | Promise<boolean>;
  /** The longest request the model takes, in estimated prompt tokens (messages and tools). */
  readonly maxContextTokens?: number;
  /**
   * What the model takes besides text: `images` and `tools` default to `true`. `confidentiality`
   * lists the levels it may be sent besides `public` (`[]`: public data only): a request whose
   * label holds another level, or that carries no label, passes the route over. Absent: any.
   */
  readonly accepts?: {
    readonly images?: boolean;
    readonly tools?: boolean;
    readonly confidentiality?: readonly string[];
  };
}

/** Options of `route`. */
export interface RouteOptions {
  /** The router's model name (e.g. in `run-start`); `route` when absent. */
  readonly name?: string;
  /** Longest wait for a route's `available()`; past it the route is passed over. Default 2000 ms. */
  readonly availableTimeoutMs?: number;
  /** The clock of that wait (tests drive it). */
  readonly timers?: Timers;
}

/** A route once checked: its name settled. */
export type NamedRoute = ModelRoute & { readonly name: string };

/** What the routing of each call needs besides the routes. */
export interface RouteSettings {
  readonly availableTimeoutMs: number;
  readonly timers: Timers;
}
