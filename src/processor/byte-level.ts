// GPT-2's byte-level alphabet (bytes_to_unicode), the one table every byte-level BPE vocabulary is
// written in: printable Latin-1 bytes stand for themselves, the other 68 bytes for U+0100 onward. Used to
// write a vocabulary (tekken.ts), to read a piece's bytes back (token-names.ts, src/grammar/utf8-guard.ts).

/** Whether byte `b` stands for itself. */
function printable(b: number): boolean {
  return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
}

/** The character standing for each byte (256 entries). */
export function byteLevelChars(): string[] {
  const out = new Array<string>(256);
  let next = 256;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(printable(b) ? b : next++);
  return out;
}

/** The table reversed, by character code: the byte a character stands for, -1 for a character that stands for none. */
export function byteLevelBytes(): Int16Array {
  const table = new Int16Array(256 + 68).fill(-1);
  byteLevelChars().forEach((ch, b) => {
    table[ch.charCodeAt(0)] = b;
  });
  return table;
}
