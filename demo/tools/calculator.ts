/**
 * A small arithmetic evaluator for the demo's `calculate` tool: numbers, + - * /,
 * unary minus and parentheses, parsed by recursive descent. The expression comes from
 * the model, so it is parsed, never handed to `eval` or `Function`.
 */

/** Longer input is refused: nothing a person asks for needs it, and it bounds the work. */
const MAX_LENGTH = 200;
/** Bounds the recursion, so "((((…" cannot overflow the stack. */
const MAX_DEPTH = 40;

type Token =
  | { readonly kind: 'number'; readonly value: number; readonly text: string; readonly at: number }
  | { readonly kind: 'operator'; readonly value: '+' | '-' | '*' | '/'; readonly at: number }
  | { readonly kind: 'paren'; readonly value: '(' | ')'; readonly at: number };

/**
 * Evaluates an arithmetic expression such as `(2 + 3) * -4 / 0.5`. Throws an `Error`
 * whose message says what is wrong (the tool host turns it into a `tool-failed` result).
 */
export function evaluateExpression(expression: string): number {
  if (expression.trim() === '') throw new Error('The expression is empty.');
  if (expression.length > MAX_LENGTH) {
    throw new Error(`The expression is longer than ${MAX_LENGTH} characters.`);
  }
  const parser = new Parser(tokenize(expression), expression);
  const value = parser.parseAll();
  if (!Number.isFinite(value)) throw new Error(`The result of "${expression}" is too large.`);
  // Twelve significant digits hide binary noise such as 0.1 + 0.2 = 0.30000000000000004.
  return Number(value.toPrecision(12));
}

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < expression.length) {
    const char = expression.charAt(index);
    if (/\s/.test(char)) {
      index += 1;
    } else if (char === '+' || char === '-' || char === '*' || char === '/') {
      tokens.push({ kind: 'operator', value: char, at: index });
      index += 1;
    } else if (char === '(' || char === ')') {
      tokens.push({ kind: 'paren', value: char, at: index });
      index += 1;
    } else if (/[\d.]/.test(char)) {
      // The whole run of digits and dots is read first, so "1..2" is one bad number, not two.
      const text = /^[\d.]+/.exec(expression.slice(index))?.[0] ?? '';
      if (!/^(\d+\.?\d*|\.\d+)$/.test(text)) {
        throw new Error(
          `"${expression}" has "${text}" at position ${index + 1}, which is not a number.`,
        );
      }
      tokens.push({ kind: 'number', value: Number(text), text, at: index });
      index += text.length;
    } else {
      throw new Error(
        `"${expression}" contains "${char}" at position ${index + 1}; only numbers, + - * / and parentheses are allowed.`,
      );
    }
  }
  return tokens;
}

/**
 * expression := term (("+" | "-") term)*
 * term       := factor (("*" | "/") factor)*
 * factor     := ("+" | "-") factor | number | "(" expression ")"
 */
class Parser {
  readonly #tokens: readonly Token[];
  readonly #source: string;
  #position = 0;
  #depth = 0;

  constructor(tokens: readonly Token[], source: string) {
    this.#tokens = tokens;
    this.#source = source;
  }

  parseAll(): number {
    const value = this.#expression();
    const extra = this.#peek();
    if (extra) {
      throw new Error(
        `"${this.#source}" has an unexpected "${tokenText(extra)}" at position ${extra.at + 1}.`,
      );
    }
    return value;
  }

  #expression(): number {
    let value = this.#term();
    for (let next = this.#peek(); next?.kind === 'operator'; next = this.#peek()) {
      if (next.value !== '+' && next.value !== '-') break;
      this.#position += 1;
      const right = this.#term();
      value = next.value === '+' ? value + right : value - right;
    }
    return value;
  }

  #term(): number {
    let value = this.#factor();
    for (let next = this.#peek(); next?.kind === 'operator'; next = this.#peek()) {
      if (next.value !== '*' && next.value !== '/') break;
      this.#position += 1;
      const right = this.#factor();
      if (next.value === '/' && right === 0) {
        throw new Error(`Division by zero in "${this.#source}".`);
      }
      value = next.value === '*' ? value * right : value / right;
    }
    return value;
  }

  #factor(): number {
    this.#depth += 1;
    try {
      if (this.#depth > MAX_DEPTH) {
        throw new Error(`"${this.#source}" is nested more than ${MAX_DEPTH} levels deep.`);
      }
      const token = this.#tokens[this.#position];
      if (token === undefined) throw new Error(`"${this.#source}" ends too early.`);
      this.#position += 1;
      if (token.kind === 'number') return token.value;
      if (token.kind === 'operator' && (token.value === '-' || token.value === '+')) {
        const operand = this.#factor();
        return token.value === '-' ? -operand : operand;
      }
      if (token.kind === 'paren' && token.value === '(') {
        const value = this.#expression();
        const closing = this.#tokens[this.#position];
        if (closing?.kind !== 'paren' || closing.value !== ')') {
          throw new Error(`"${this.#source}" has a "(" at position ${token.at + 1} never closed.`);
        }
        this.#position += 1;
        return value;
      }
      throw new Error(
        `"${this.#source}" has an unexpected "${tokenText(token)}" at position ${token.at + 1}.`,
      );
    } finally {
      this.#depth -= 1;
    }
  }

  #peek(): Token | undefined {
    return this.#tokens[this.#position];
  }
}

function tokenText(token: Token): string {
  return token.kind === 'number' ? token.text : token.value;
}
