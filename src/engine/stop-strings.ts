// OpenAI's `stop`: the answer ends before the first place any stop string appears in its text, wherever
// the token boundaries fall, and the stop string is not part of it. Text that might be the start of a stop
// string is held back until the next tokens tell:
//
//   stop ["</answer>"]   deltas "42 </"  "ans"  "wer> more"
//   emitted              "42 "   ""     ""          -> matched: text "42 ", finish_reason 'stop'
//   held back            "</"    "</ans"  (match)
//
// Deltas are the detokenizer's (whole characters); matching is on UTF-16 text, as String.indexOf does.

export class StopStrings {
  private held = '';
  private matched = false;

  constructor(private readonly stops: readonly string[]) {}

  /** Whether a stop string has been seen: nothing after it is text. */
  get stopped(): boolean {
    return this.matched;
  }

  /** The text to emit now for `delta` ('' while it might begin a stop string; nothing after a match). */
  push(delta: string): string {
    if (this.matched) return '';
    if (this.stops.length === 0) return delta;
    const text = this.held + delta;
    let cut = -1;
    for (const s of this.stops) {
      const at = text.indexOf(s);
      if (at >= 0 && (cut < 0 || at < cut)) cut = at;
    }
    if (cut >= 0) {
      this.matched = true;
      this.held = '';
      return text.slice(0, cut);
    }
    // Hold back the longest tail that is the beginning of a stop string.
    let keep = 0;
    for (const s of this.stops) {
      for (let n = Math.min(s.length - 1, text.length); n > keep; n--) {
        if (text.endsWith(s.slice(0, n))) {
          keep = n;
          break;
        }
      }
    }
    this.held = text.slice(text.length - keep);
    return text.slice(0, text.length - keep);
  }

  /** The answer ended without a match: what was held back is text after all. */
  flush(): string {
    const rest = this.matched ? '' : this.held;
    this.held = '';
    return rest;
  }
}
