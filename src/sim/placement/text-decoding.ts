import { PlacementError } from './placement-schema.js'

/**
 * Bytes → text. Handles UTF-8 (with or without BOM) and UTF-16 with a BOM, which is how EasyEDA
 * writes its pick-and-place export. Binary data is refused.
 */
export function decodePlacementText(bytes: Buffer): string {
  if (bytes.length === 0) throw new PlacementError('the file is empty')
  let text: string
  if (bytes[0] === 0xff && bytes[1] === 0xfe) text = bytes.subarray(2).toString('utf16le')
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) text = Buffer.from(bytes.subarray(2, 2 + ((bytes.length - 2) & ~1))).swap16().toString('utf16le')
  else text = bytes.toString('utf8').replace(/^\uFEFF/, '')
  const sample = text.slice(0, 4096)
  const controls = sample.match(/[\u0000-\u0008\u000e-\u001f\ufffd]/g)?.length ?? 0
  if (controls > 0 && controls >= sample.length / 100) throw new PlacementError('the file is binary, not a text placement file')
  return text
}

/** Lines with their 1-based numbers, trailing whitespace removed, blank lines dropped. */
export function numberedLines(text: string): { text: string; line: number }[] {
  return text
    .split(/\r\n|\r|\n/)
    .map((line, i) => ({ text: line.replace(/\s+$/, ''), line: i + 1 }))
    .filter((l) => l.text.trim() !== '')
}
