/** The page's accent colour: what `set_theme` changes, kept across reloads. */
import { isThemeColor, THEME_SHADES, type ThemeColor } from '../shared/theme-colors';

const STORAGE_KEY = 'airlock-demo.theme';

/** Sets the page's accent to `color` and remembers it for the next visit. */
export function applyTheme(color: ThemeColor): void {
  const { light, dark } = THEME_SHADES[color];
  const root = document.documentElement;
  // `light-dark()` picks the shade for the page's colour scheme, so both stay readable.
  root.style.setProperty('--accent', `light-dark(${light}, ${dark})`);
  root.dataset.theme = color;
  try {
    localStorage.setItem(STORAGE_KEY, color);
  } catch {
    // Storage may be off (private mode, quota); the change still shows for this visit.
  }
}

/** Applies the accent chosen on an earlier visit, if any. */
export function restoreTheme(): void {
  let saved: string | null = null;
  try {
    saved = localStorage.getItem(STORAGE_KEY);
  } catch {
    return;
  }
  if (saved !== null && isThemeColor(saved)) applyTheme(saved);
}
