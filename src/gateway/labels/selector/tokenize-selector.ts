/** The tokens of a selector's text. `in` and `notin` are words: the parser tells them from keys by where they stand. */
export type TokenKind = 'word' | '=' | '==' | '!=' | '!' | ',' | '(' | ')' | 'end'

export interface Token {
  readonly kind: TokenKind
  readonly text: string
  /** 0-based index of the token's first character in the selector's text. */
  readonly position: number
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r'])
const PUNCTUATION = new Set([',', '(', ')', '=', '!'])

/**
 * A word is a run of anything else: a key or value with a character no rule allows (a quote,
 * a letter outside ASCII) stays one word, so the parser reports it whole at its start.
 */
export function tokenizeSelector(text: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const char = text[i]!
    if (WHITESPACE.has(char)) {
      i++
    } else if ((char === '=' || char === '!') && text[i + 1] === '=') {
      tokens.push({ kind: char === '=' ? '==' : '!=', text: `${char}=`, position: i })
      i += 2
    } else if (PUNCTUATION.has(char)) {
      tokens.push({ kind: char as TokenKind, text: char, position: i })
      i++
    } else {
      const start = i
      while (i < text.length && !WHITESPACE.has(text[i]!) && !PUNCTUATION.has(text[i]!)) i++
      tokens.push({ kind: 'word', text: text.slice(start, i), position: start })
    }
  }
  tokens.push({ kind: 'end', text: '', position: text.length })
  return tokens
}
