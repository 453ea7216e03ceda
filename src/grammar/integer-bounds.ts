// integer-bounds.ts: minimum / maximum / exclusiveMinimum / exclusiveMaximum on type "integer", in the
// forms XGrammar 0.1.27 enforces exactly. Its own range grammars are wrong for many bounds (measured over
// every bound 0..1300: maximum 110..198 with a last digit other than 9 accepts up to the next ten, minimum
// 901..989 likewise below; minimum 5 alone is `[5-9] | [1-9][0-9]*`, which accepts 1..4), so:
//
//   bounds, as the inclusive integer range lo..hi     compiled as
//   lo and hi finite, at most MAX_ENUM_VALUES values  the list of values (an enum; schema-rewrite.ts)
//   lo = 0 or 1, no upper bound                       XGrammar's own `"0" | [1-9][0-9]*` / `[1-9] | [1-9][0-9]*`
//   hi = 0 or -1, no lower bound                      XGrammar's own `"-"[1-9][0-9]* | "0"` / `"-"[1-9][0-9]*`
//   anything else                                      refused
//
// (those four one-sided forms were checked against every integer from -300 to 300).

import { MAX_ENUM_VALUES } from './limits';

export type IntegerBounds =
  | { kind: 'none' }
  | { kind: 'values'; values: number[] }
  | { kind: 'one-sided'; minimum?: number; maximum?: number }
  | { kind: 'refused'; reason: string };

/** The bounds of an integer schema (its bound keywords are numbers; schema-check.ts checked that). */
export function integerBounds(node: Record<string, unknown>): IntegerBounds {
  const num = (k: string): number | undefined => (typeof node[k] === 'number' ? (node[k] as number) : undefined);
  const lows = [num('minimum') === undefined ? undefined : Math.ceil(num('minimum')!), exclusiveLow(num('exclusiveMinimum'))];
  const highs = [num('maximum') === undefined ? undefined : Math.floor(num('maximum')!), exclusiveHigh(num('exclusiveMaximum'))];
  const lo = maxOf(lows);
  const hi = minOf(highs);
  if (lo === undefined && hi === undefined) return { kind: 'none' };
  for (const b of [lo, hi]) {
    if (b !== undefined && !Number.isSafeInteger(b))
      return { kind: 'refused', reason: `bound ${b} is beyond ±(2^53 - 1), where JSON numbers stop being exact integers` };
  }
  if (lo !== undefined && hi !== undefined) {
    if (lo > hi) return { kind: 'refused', reason: `leave no integer: the range is ${lo}..${hi}` };
    if (hi - lo + 1 <= MAX_ENUM_VALUES) return { kind: 'values', values: Array.from({ length: hi - lo + 1 }, (_, i) => lo + i) };
  } else if (lo === 0 || lo === 1) {
    return { kind: 'one-sided', minimum: lo };
  } else if (hi === 0 || hi === -1) {
    return { kind: 'one-sided', maximum: hi };
  }
  const range = `${lo ?? '-∞'}..${hi ?? '∞'}`;
  return {
    kind: 'refused',
    reason:
      `give the integer range ${range}, which XGrammar 0.1.27 does not enforce exactly (its range grammars let nearby values through); ` +
      `Tessera accepts a range of at most ${MAX_ENUM_VALUES} integers, minimum 0 or 1 alone, or maximum 0 or -1 alone`,
  };
}

function exclusiveLow(v: number | undefined): number | undefined {
  return v === undefined ? undefined : Math.floor(v) + 1;
}

function exclusiveHigh(v: number | undefined): number | undefined {
  return v === undefined ? undefined : Math.ceil(v) - 1;
}

function maxOf(xs: Array<number | undefined>): number | undefined {
  const d = xs.filter((x): x is number => x !== undefined);
  return d.length ? Math.max(...d) : undefined;
}

function minOf(xs: Array<number | undefined>): number | undefined {
  const d = xs.filter((x): x is number => x !== undefined);
  return d.length ? Math.min(...d) : undefined;
}
