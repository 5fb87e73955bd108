// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { fakeWeather } from '../../../demo/tools/fake-weather';

describe('the demo fake weather', () => {
  it('gives the same city the same weather every time, whatever its case', () => {
    expect(fakeWeather('Paris')).toEqual(fakeWeather('Paris'));
    expect(fakeWeather('paris').temperatureC).toBe(fakeWeather('Paris').temperatureC);
  });

  it('keeps temperatures between -5 and 29 °C and says the data is fake', () => {
    for (const city of ['Paris', 'Oslo', 'Tokyo', 'São Paulo', 'Reykjavík', 'X']) {
      const weather = fakeWeather(city);
      expect(weather.temperatureC).toBeGreaterThanOrEqual(-5);
      expect(weather.temperatureC).toBeLessThanOrEqual(29);
      expect(weather.source).toBe('fake data from the Airlock demo');
    }
  });
});
