// Rendering an untrusted Jinja chat template with bounds. A checkpoint's template is code written by
// whoever published the checkpoint, and @huggingface/jinja runs it synchronously on the calling thread:
// `{% for i in range(1000000000) %}` builds a billion-element array first (V8 aborts the whole Node
// process with a fatal "invalid array length"; a browser tab dies the same way), and nested loops or a
// string doubled in a loop block the page for as long as they run. Bounded here, in browsers and Node
// alike, without a worker:
//
//   steps     every node the interpreter evaluates is counted (Interpreter.evaluate is the one entry
//             point all statements and expressions go through, recursively), and every block (each
//             loop iteration runs one, even with an empty body)
//   time      the clock is read every 16 steps; no single step runs long, because the only builtin
//             that makes unbounded work from a small input, range(), is replaced by a bounded one
//   output    every value a step produces is measured: strings by length, arrays by item count
//   recursion a macro calling itself until the JS stack overflows becomes a named error too
//
// A template over any bound stops with ChatTemplateLimitError. The globals are those of
// @huggingface/jinja's setupGlobals (not exported by the package), with range() bounded.

import { Environment, Interpreter, type Template } from '@huggingface/jinja';
import { ChatTemplateLimitError } from '../errors';
import type { TemplateBounds } from './template-bounds';

export { DEFAULT_TEMPLATE_BOUNDS, type TemplateBounds } from './template-bounds';

type Statement = Parameters<Interpreter['evaluate']>[0];
type RuntimeValue = ReturnType<Interpreter['evaluate']>;

class BoundedInterpreter extends Interpreter {
  private steps = 0;
  private readonly deadline: number;

  constructor(
    env: Environment,
    private readonly bounds: TemplateBounds,
    private readonly maxValueLength: number,
  ) {
    super(env);
    this.deadline = performance.now() + bounds.maxMs;
    // A loop iteration with an empty body evaluates no node, but runs evaluateBlock (private in the
    // typings, a plain method at run time): count it as a step too, on this instance only.
    const self = this as unknown as { evaluateBlock(statements: Statement[], env: Environment): RuntimeValue };
    const evaluateBlock = self.evaluateBlock.bind(this);
    self.evaluateBlock = (statements, env) => {
      this.step();
      return evaluateBlock(statements, env);
    };
  }

  override evaluate(statement: Statement, environment: Environment): RuntimeValue {
    this.step();
    const value = super.evaluate(statement, environment);
    const v = value.value as unknown;
    const length = typeof v === 'string' || Array.isArray(v) ? v.length : 0;
    if (length > this.maxValueLength) throw new ChatTemplateLimitError('output', length, this.maxValueLength);
    return value;
  }

  private step(): void {
    const steps = ++this.steps;
    if (steps > this.bounds.maxSteps) throw new ChatTemplateLimitError('steps', steps, this.bounds.maxSteps);
    if ((steps & 15) === 0) {
      const overMs = performance.now() - this.deadline;
      if (overMs > 0) throw new ChatTemplateLimitError('time', Math.round(this.bounds.maxMs + overMs), this.bounds.maxMs);
    }
  }
}

/** range() as Python and @huggingface/jinja define it, refusing more than `max` items before making any. */
function boundedRange(max: number) {
  return (start: number, stop?: number, step = 1): number[] => {
    if (stop === undefined) {
      stop = start;
      start = 0;
    }
    if (![start, stop, step].every(Number.isFinite)) throw new Error('range() arguments must be finite numbers');
    if (step === 0) throw new Error('range() step must not be zero');
    const length = Math.max(0, Math.ceil((stop - start) / step));
    if (length > max) throw new ChatTemplateLimitError('range', length, max);
    return Array.from({ length }, (_, i) => start + i * step);
  };
}

/** Python's strftime for the codes @huggingface/jinja's strftime_now supports (its own implementation). */
function strftimeNow(format: string): string {
  const date = new Date();
  const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));
  return String(format).replace(/%[YmdbBHM%]/g, (token) => {
    switch (token) {
      case '%Y':
        return String(date.getFullYear());
      case '%m':
        return pad2(date.getMonth() + 1);
      case '%d':
        return pad2(date.getDate());
      case '%b':
        return new Intl.DateTimeFormat(undefined, { month: 'short' }).format(date);
      case '%B':
        return new Intl.DateTimeFormat(undefined, { month: 'long' }).format(date);
      case '%H':
        return pad2(date.getHours());
      case '%M':
        return pad2(date.getMinutes());
      default:
        return '%';
    }
  });
}

/**
 * Template.render(items), within `bounds`. `inputChars` (the characters of the variables passed in) raises
 * the value bound, so long user text is never mistaken for a runaway template.
 */
export function renderBounded(template: Template, items: Record<string, unknown>, bounds: TemplateBounds, inputChars = 0): string {
  const env = new Environment();
  const globals: Record<string, unknown> = {
    false: false,
    true: true,
    none: null,
    False: false,
    True: true,
    None: null,
    raise_exception: (message: string) => {
      throw new Error(message);
    },
    range: boundedRange(bounds.maxRangeLength),
    strftime_now: strftimeNow,
  };
  for (const [k, v] of Object.entries({ ...globals, ...items })) env.set(k, v);
  const interpreter = new BoundedInterpreter(env, bounds, bounds.maxValueLength + 2 * inputChars);
  try {
    return (interpreter.run(template.parsed) as { value: string }).value;
  } catch (e) {
    // The JS stack (a macro calling itself) and V8's string length are bounds too.
    if (e instanceof RangeError && /call stack/i.test(e.message)) throw new ChatTemplateLimitError('recursion', 0, 0);
    if (e instanceof RangeError && /string length/i.test(e.message))
      throw new ChatTemplateLimitError('output', 2 ** 29, bounds.maxValueLength);
    throw e;
  }
}
