import { describe, expect, it } from 'vitest';
import { browserSetups, selectedBrowsers } from '../../../scripts/browsers.mjs';

describe('the engines npm test runs', () => {
  it('runs all three, Chromium first, when AIRLOCK_BROWSERS is blank', () => {
    expect(selectedBrowsers('')).toEqual(['chromium', 'firefox', 'webkit']);
    expect(selectedBrowsers(' ')).toEqual(['chromium', 'firefox', 'webkit']);
  });

  it('narrows to the comma list, in its order, ignoring case, spaces and repeats', () => {
    expect(selectedBrowsers('firefox')).toEqual(['firefox']);
    expect(selectedBrowsers(' WebKit , chromium,webkit ')).toEqual(['webkit', 'chromium']);
  });

  it('refuses a name that is not an engine, naming the ones there are', () => {
    expect(() => selectedBrowsers('chromium,safari')).toThrow(
      'AIRLOCK_BROWSERS names "safari"; the engines are chromium, firefox, webkit.',
    );
  });

  it("installs each engine from Debian's packages", () => {
    expect(browserSetups.chromium.packages).toEqual(['chromium']);
    expect(browserSetups.firefox.packages).toEqual(['firefox-esr']);
    expect(browserSetups.webkit.packages).toEqual(['webkit2gtk-driver', 'xvfb']);
  });
});
