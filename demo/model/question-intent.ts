/**
 * What the offline model understands of a message: the weather in some cities,
 * arithmetic, a fact to remember, a page change, and a few demo requests. A handful of
 * honest rules, not language understanding.
 */
import { findPageRequest } from './exfiltration-script.js';
import { type FactToSave, findFactToSave, findRecallQuery } from './memory-phrases.js';
import { findThemeColor } from './theme-request.js';

/** What a message asks for. */
export type Intent =
  | { readonly kind: 'weather'; readonly cities: readonly string[] }
  /** Statistics over the weather of several cities: a script for the code tool. */
  | { readonly kind: 'weather-analysis'; readonly cities: readonly string[] }
  | { readonly kind: 'weather-without-city' }
  | { readonly kind: 'arithmetic'; readonly expression: string }
  | { readonly kind: 'calculate-without-expression' }
  | { readonly kind: 'remember'; readonly fact: FactToSave }
  | { readonly kind: 'recall'; readonly query?: string }
  /** `color` is what the user named, known to `set_theme` or not (the tool checks). */
  | { readonly kind: 'theme'; readonly color: string }
  | { readonly kind: 'theme-without-color' }
  | { readonly kind: 'report'; readonly topic: string }
  | { readonly kind: 'headline'; readonly topic: string }
  | { readonly kind: 'list-notes' }
  /** "Summarise the web page https://…": `fetch_page`. */
  | { readonly kind: 'web-page'; readonly url: string }
  | { readonly kind: 'long-answer' }
  | { readonly kind: 'other' };

/** At most this many parallel lookups from one question. */
const MAX_CITIES = 5;

const WEATHER_WORDS =
  /\b(weather|temperature|forecast|degrees|hot|cold|warm|sunny|rain|raining|snow|snowing|windy)\b/i;
const ANALYSIS_WORDS = /\b(warmest|coldest|hottest|average|mean|compare|analy[sz]e)\b/i;
const CALCULATE_WORDS = /\b(calculate|compute|evaluate|solve)\b/i;
/** Runs of characters an expression is made of; the longest one with a digit is the candidate. */
const EXPRESSION_RUNS = /[\d.+\-*/()\s]+/g;
/** A preposition that usually comes before a place: "in Paris", "for Oslo", "at Lyon". */
const PLACE_PREPOSITION = /\b(?:in|for|at)\s+([^?!.;:]+)/i;
/** Words around city names that are not part of them. */
const NOT_A_CITY = new Set([
  ...['a', 'an', 'the', 'of', 'in', 'for', 'at', 'on', 'to', 'and', 'or', 'is', 'it', 'be'],
  ...['what', "what's", 'whats', 'how', "how's", 'hows', 'tell', 'me', 'give', 'show', 'please'],
  ...['weather', 'temperature', 'forecast', 'degrees', 'like', 'there', 'here', 'terms'],
  ...['today', 'tomorrow', 'tonight', 'now', 'right', 'currently', 'moment', 'this', 'that'],
  ...['week', 'weekend', 'morning', 'afternoon', 'evening', 'hot', 'cold', 'warm', 'sunny'],
  ...['rain', 'raining', 'snow', 'snowing', 'windy', 'do', 'does', 'can', 'could', 'will', 'i'],
  ...['which', 'warmest', 'coldest', 'hottest', 'average', 'compare', 'analyse', 'analyze'],
]);
const WORD = /\p{L}[\p{L}'’-]*/gu;

const REPORT_WORDS = /\b(report|slow)\b/i;
const HEADLINE_WORDS = /\b(headlines?|news)\b/i;
/** The shared notes of the demo's MCP server (after memory requests: "note that …" is one). */
const NOTES_WORDS = /\b(shared notes|(?:list|show)(?: the| my)? notes|mcp)\b/i;
const LONG_WORDS = /\b(story|essay|long|in detail|tour|explain)\b/i;
/** The topic of a report or a headline: what follows "on", "about" or "for". */
const TOPIC = /\b(?:on|about|for|of)\s+([^?!.;:]+)/i;

/**
 * Reads a user's message. A web page to summarise comes first, then memory requests ("remember that my favourite colour
 * is green" is not a page change), then page changes, then weather over arithmetic.
 */
export function readIntent(question: string): Intent {
  // First: the page request quotes a private note, which is not a note to remember.
  const url = findPageRequest(question);
  if (url !== undefined) return { kind: 'web-page', url };
  const fact = findFactToSave(question);
  if (fact) return { kind: 'remember', fact };
  const recall = findRecallQuery(question);
  if (recall) return { kind: 'recall', ...recall };
  const theme = findThemeColor(question);
  if (theme)
    return theme.color === undefined
      ? { kind: 'theme-without-color' }
      : { kind: 'theme', color: theme.color };
  if (ANALYSIS_WORDS.test(question)) {
    const cities = findCities(question);
    if (cities.length > 1) return { kind: 'weather-analysis', cities };
  }
  if (WEATHER_WORDS.test(question)) {
    const cities = findCities(question);
    return cities.length > 0 ? { kind: 'weather', cities } : { kind: 'weather-without-city' };
  }
  if (REPORT_WORDS.test(question)) return { kind: 'report', topic: findTopic(question, 'sales') };
  if (NOTES_WORDS.test(question)) return { kind: 'list-notes' };
  if (HEADLINE_WORDS.test(question)) {
    return { kind: 'headline', topic: findTopic(question, 'technology') };
  }
  const expression = findExpression(question);
  if (expression !== undefined) return { kind: 'arithmetic', expression };
  if (CALCULATE_WORDS.test(question)) return { kind: 'calculate-without-expression' };
  if (LONG_WORDS.test(question)) return { kind: 'long-answer' };
  return { kind: 'other' };
}

function findTopic(question: string, fallback: string): string {
  const topic = TOPIC.exec(question)?.[1]
    ?.trim()
    .replace(/^(?:the|a|an)\s+/i, '');
  return topic === undefined || topic === '' ? fallback : topic.slice(0, 60);
}

/**
 * Cities named after the first "in"/"for"/"at" ("in Paris and Oslo"), in any case; failing that,
 * capitalised words that are not question words ("Paris weather?").
 */
export function findCities(question: string): string[] {
  const phrase = PLACE_PREPOSITION.exec(question)?.[1] ?? '';
  const named = phrase.split(/,|&|\band\b|\bor\b/i).flatMap((part) => {
    const name = leadingName(part.match(WORD) ?? []);
    return name === '' ? [] : [name];
  });
  const cities = named.length > 0 ? named : capitalisedNames(question);
  const seen = new Set<string>();
  return cities
    .filter((city) => {
      const key = city.toLowerCase();
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .slice(0, MAX_CITIES);
}

/**
 * The arithmetic in a question: the longest run of digits, operators and parentheses,
 * if it has an operator, or any number after "calculate". `undefined` when there is none.
 */
export function findExpression(question: string): string | undefined {
  const normalised = question.replaceAll('×', '*').replaceAll('÷', '/');
  let best = '';
  for (const match of normalised.matchAll(EXPRESSION_RUNS)) {
    // A sentence's closing full stop is not part of "2+2.".
    const run = match[0].trim().replace(/[\s.]+$/, '');
    if (/\d/.test(run) && run.length > best.length) best = run;
  }
  if (best === '') return undefined;
  if (/[+\-*/]/.test(best) || CALCULATE_WORDS.test(question)) return best;
  return undefined;
}

/** The first run of words that are not filler, title-cased: ["the", "new", "york"] → "New York". */
function leadingName(words: readonly string[]): string {
  const name: string[] = [];
  for (const word of words) {
    if (NOT_A_CITY.has(word.toLowerCase())) {
      if (name.length > 0) break;
      continue;
    }
    name.push(word.charAt(0).toUpperCase() + word.slice(1));
  }
  return name.join(' ');
}

/** Runs of capitalised words, leaving out filler such as a leading "What". */
function capitalisedNames(question: string): string[] {
  const names: string[] = [];
  let current: string[] = [];
  const flush = () => {
    if (current.length > 0) names.push(current.join(' '));
    current = [];
  };
  // Splitting on "and" and punctuation first keeps "Paris and Oslo" as two names.
  for (const part of question.split(/[,&?!.;:]|\band\b|\bor\b/)) {
    for (const word of part.match(WORD) ?? []) {
      const capitalised = word.charAt(0) !== word.charAt(0).toLowerCase();
      if (capitalised && !NOT_A_CITY.has(word.toLowerCase())) current.push(word);
      else flush();
    }
    flush();
  }
  return names;
}
