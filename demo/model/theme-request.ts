/**
 * How the offline model reads a request to change the page's accent colour:
 * "make the page green", "set the theme to purple", "change the accent colour to teal".
 */
import { THEME_COLOR_NAMES } from '../shared/theme-colors.js';

const VERB = /\b(make|set|change|turn|switch|paint)\b/i;
const NOUN = /\b(theme|page|accent|colou?rs?|background)\b/i;
/** An unknown colour is taken only after "to"/"into", where nothing else is likely to stand. */
const AFTER_TO = /\b(?:to|into)\s+([a-z]+)\b/i;

/**
 * `{ color }` when `message` asks for a page colour: a colour `set_theme` knows, or the word
 * after "to" (which the tool will refuse if it does not know it); `{}` when it names no
 * colour; `undefined` when it is not such a request.
 */
export function findThemeColor(message: string): { color?: string } | undefined {
  if (!VERB.test(message) || !NOUN.test(message)) return undefined;
  const words: readonly string[] = message.toLowerCase().match(/[a-z]+/g) ?? [];
  const known = THEME_COLOR_NAMES.find((name) => words.includes(name));
  if (known !== undefined) return { color: known };
  const named = AFTER_TO.exec(message)?.[1]?.toLowerCase();
  return named === undefined ? {} : { color: named };
}
