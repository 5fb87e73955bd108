import type { ErrorData } from './errors';

/**
 * Why the model router (`route([...])`) passed a route over for one model call. Checked in
 * this order, the first that holds is told: `images` (the request carries an image and the
 * route does not accept images), `tools` (it offers tools, the route does not accept them),
 * `confidentiality` (the request's label holds a level the route's `accepts.confidentiality`
 * does not name, or the request carries no label),
 * `context` (the request's estimated tokens exceed the route's `maxContextTokens`),
 * `declined` (its `when` answered anything but `true`, or threw), `unavailable` (its
 * `available` answered anything but `true`, threw, or did not answer in time), `failed` (it
 * was tried and failed with a fault before it streamed any content: `error` says which).
 */
export type RoutePassReason =
  | 'images'
  | 'tools'
  | 'confidentiality'
  | 'context'
  | 'declined'
  | 'unavailable'
  | 'failed';

/** A route the router did not answer a call with, and why. */
export interface PassedOverRoute {
  /** The route's name (its `name`, or its model's). */
  readonly route: string;
  readonly reason: RoutePassReason;
  /** For `failed`: the route's error; for a `when` or `available` that threw: what it threw. */
  readonly error?: ErrorData;
  /** For `context`: the request's estimated tokens and the route's `maxContextTokens`. */
  readonly tokens?: number;
  readonly maxContextTokens?: number;
  /** For `confidentiality`: the request's levels the route does not accept (`unlabelled` when it had no label). */
  readonly levels?: readonly string[];
}

/** Which route answered a model call, and the routes passed over before it, in order. */
export interface ModelRouteChoice {
  readonly route: string;
  readonly passedOver: readonly PassedOverRoute[];
}
