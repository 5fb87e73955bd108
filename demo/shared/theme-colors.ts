/**
 * The accent colours the demo's `set_theme` tool accepts. Shared by the page (which
 * applies them) and the offline model (which recognises their names), so it is plain data.
 */

/** Colour names `set_theme` takes; anything else fails its argument check. */
export const THEME_COLOR_NAMES = [
  'blue',
  'green',
  'purple',
  'orange',
  'red',
  'teal',
  'pink',
] as const;

/** One of {@link THEME_COLOR_NAMES}. */
export type ThemeColor = (typeof THEME_COLOR_NAMES)[number];

/** Each accent in a shade readable on the light page and one readable on the dark page. */
export const THEME_SHADES: Readonly<Record<ThemeColor, { light: string; dark: string }>> = {
  blue: { light: '#2f5bd3', dark: '#7c9cff' },
  green: { light: '#1f7a4d', dark: '#5fd39a' },
  purple: { light: '#7b3fc4', dark: '#c29bff' },
  orange: { light: '#a8520a', dark: '#ffb066' },
  red: { light: '#b3261e', dark: '#ff8a80' },
  teal: { light: '#00796b', dark: '#4fd6c4' },
  pink: { light: '#b0306e', dark: '#ff8cc6' },
};

/** Whether `name` is a colour `set_theme` accepts. */
export function isThemeColor(name: string): name is ThemeColor {
  return (THEME_COLOR_NAMES as readonly string[]).includes(name);
}
