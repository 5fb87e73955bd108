/**
 * What the puppeteer (Firefox) and WebDriver (WebKit) pages share: a locator as a lazy chain
 * of steps, as Playwright's, built here and resolved in the page by {@link installResolver}
 * on every use; each engine's subclass says how to run the chain there.
 */
import type { DemoLocator } from './demo-page';

/** One step of a locator chain, resolved in the page. */
export type Step =
  | { readonly kind: 'css'; readonly selector: string }
  | { readonly kind: 'nth'; readonly index: number }
  | { readonly kind: 'button'; readonly name: string };

/** The chain's building half of a {@link DemoLocator}; the engine's subclass acts and reads. */
export abstract class StepLocator implements DemoLocator {
  /** A locator of the same page with `step` added to the chain. */
  protected abstract withStep(step: Step): StepLocator;

  first(): DemoLocator {
    return this.withStep({ kind: 'nth', index: 0 });
  }

  last(): DemoLocator {
    return this.withStep({ kind: 'nth', index: -1 });
  }

  locator(selector: string): DemoLocator {
    return this.withStep({ kind: 'css', selector });
  }

  getByRole(_role: 'button', options: { name: string }): DemoLocator {
    return this.withStep({ kind: 'button', name: options.name });
  }

  abstract count(): Promise<number>;
  abstract allTextContents(): Promise<string[]>;
  abstract textContent(): Promise<string | null>;
  abstract getAttribute(name: string, options?: { timeout?: number }): Promise<string | null>;
  abstract inputValue(): Promise<string>;
  abstract evaluate<R>(read: (element: HTMLElement) => R): Promise<R>;
  abstract waitFor(options?: { timeout?: number }): Promise<void>;
  abstract fill(value: string): Promise<void>;
  abstract press(key: string): Promise<void>;
  abstract click(): Promise<void>;
}

/** What {@link installResolver} defines in the page. */
export interface ResolverGlobal {
  __airlockResolve(steps: readonly Step[]): Element[];
}

/**
 * Defines the chain resolver in the page (again after a navigation). Runs in the page,
 * so it is self-contained.
 */
export function installResolver(): void {
  const scope = globalThis as unknown as Partial<ResolverGlobal>;
  if (scope.__airlockResolve) return;
  scope.__airlockResolve = (steps) => {
    let found: Array<Element | Document> = [document];
    for (const step of steps) {
      if (step.kind === 'css') {
        found = found.flatMap((root) => [...root.querySelectorAll(step.selector)]);
      } else if (step.kind === 'nth') {
        const one = found.at(step.index);
        found = one ? [one] : [];
      } else {
        // Playwright matches an accessible name case-insensitively, as a substring.
        const name = step.name.toLowerCase();
        found = found.flatMap((root) =>
          [...root.querySelectorAll('button, [role="button"], input[type="submit"]')].filter(
            (element) =>
              (element.getAttribute('aria-label') ?? element.textContent ?? '')
                .trim()
                .toLowerCase()
                .includes(name),
          ),
        );
      }
    }
    return found.filter((node): node is Element => node instanceof Element);
  };
}
