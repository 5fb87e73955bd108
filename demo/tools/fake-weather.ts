/**
 * Made-up weather for the demo's `get_weather` tool. Deterministic, so the same city
 * always gets the same answer and the demo can be followed step by step.
 */

/** What `get_weather` returns for a city. */
export interface FakeWeather {
  readonly city: string;
  readonly temperatureC: number;
  readonly sky: string;
  /** Says in the data itself that it is invented, so no reader mistakes it for a forecast. */
  readonly source: 'fake data from the Airlock demo';
}

const MILD_SKIES = ['clear', 'sunny', 'partly cloudy', 'overcast', 'rainy', 'windy', 'foggy'];
const FREEZING_SKIES = ['clear', 'overcast', 'snowy', 'windy'];

/** Invents the weather of `city` from its letters: a temperature from -5 to 29 °C and a sky. */
export function fakeWeather(city: string): FakeWeather {
  const name = city.trim();
  let hash = 7;
  for (const char of name.toLowerCase()) {
    hash = (hash * 31 + (char.codePointAt(0) ?? 0)) % 100_003;
  }
  const temperatureC = (hash % 35) - 5;
  const skies = temperatureC <= 0 ? FREEZING_SKIES : MILD_SKIES;
  const sky = skies[Math.floor(hash / 35) % skies.length] ?? 'clear';
  return { city: name, temperatureC, sky, source: 'fake data from the Airlock demo' };
}

/** How long the fake lookup takes (300-699 ms), so the tool card shows a running state. */
export function fakeLatencyMs(city: string): number {
  let sum = 0;
  for (const char of city) sum += char.codePointAt(0) ?? 0;
  return 300 + (sum % 400);
}
