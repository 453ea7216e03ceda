// The chat template is untrusted code: a runaway loop, a string grown without end or a macro recursing
// forever stops with ChatTemplateLimitError within its bounds, instead of aborting Node (range(1e9) is a
// V8 fatal error with @huggingface/jinja's own range) or blocking the page. Real templates render exactly
// as @huggingface/jinja renders them.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Template } from '@huggingface/jinja';
import { describe, expect, it } from 'vitest';
import { ChatTemplateError, ChatTemplateLimitError } from '../../src/errors';
import { DEFAULT_TEMPLATE_BOUNDS, renderBounded } from '../../src/processor/bounded-jinja';
import { ChatTemplate, type TemplateMessage } from '../../src/processor/chat-template';

const REAL = JSON.parse(readFileSync(resolve(import.meta.dirname, '../fixtures/models/SmolVLM-256M-Instruct/chat_template.json'), 'utf8'))
  .chat_template as string;
const MESSAGES: TemplateMessage[] = [
  { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
  { role: 'user', content: [{ type: 'image' }, { type: 'text', text: 'What is this?' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'A cat.' }] },
  { role: 'user', content: [{ type: 'text', text: 'And the colour?' }, { type: 'image' }] },
];

function limitOf(source: string, bounds = DEFAULT_TEMPLATE_BOUNDS): { err: unknown; ms: number } {
  const t0 = performance.now();
  try {
    new ChatTemplate(source, {}, bounds).render(MESSAGES, true);
  } catch (err) {
    return { err, ms: performance.now() - t0 };
  }
  return { err: undefined, ms: performance.now() - t0 };
}

describe('bounded chat template rendering', () => {
  it('renders the real SmolVLM template exactly as @huggingface/jinja does', () => {
    const items = { messages: MESSAGES as unknown as Record<string, unknown>[], add_generation_prompt: true, bos_token: '<|im_start|>' };
    expect(renderBounded(new Template(REAL), items, DEFAULT_TEMPLATE_BOUNDS)).toBe(new Template(REAL).render(items));
  });

  it('keeps the builtins: range, namespace, raise_exception, strftime_now', () => {
    const t = new Template(
      "{% set ns = namespace(n=0) %}{% for i in range(2, 10, 3) %}{% set ns.n = ns.n + i %}{{ i }},{% endfor %}{{ ns.n }} {{ strftime_now('%Y')|length }}",
    );
    expect(renderBounded(t, {}, DEFAULT_TEMPLATE_BOUNDS)).toBe('2,5,8,15 4');
    expect(() => renderBounded(new Template("{{ raise_exception('no') }}"), {}, DEFAULT_TEMPLATE_BOUNDS)).toThrow('no');
  });

  it('range(1000000000) is refused before it builds the array', () => {
    const { err, ms } = limitOf('{% for i in range(1000000000) %}{% endfor %}');
    expect(err).toBeInstanceOf(ChatTemplateLimitError);
    expect((err as ChatTemplateLimitError).limit).toBe('range');
    expect((err as Error).message).toContain('its range reached 1000000000 but the bound is 100000');
    expect(ms).toBeLessThan(1000);
  });

  it('nested loops stop within the default bounds (steps or time, whichever comes first)', () => {
    const { err, ms } = limitOf('{% for i in range(100000) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}');
    expect(err).toBeInstanceOf(ChatTemplateLimitError);
    expect(['steps', 'time']).toContain((err as ChatTemplateLimitError).limit);
    expect(ms).toBeLessThan(DEFAULT_TEMPLATE_BOUNDS.maxMs + 3000);
  });

  it('at the step bound, counting iterations with empty bodies', () => {
    const { err } = limitOf('{% for i in range(100000) %}{% for j in range(10) %}{% endfor %}{% endfor %}', {
      ...DEFAULT_TEMPLATE_BOUNDS,
      maxSteps: 100_000,
      maxMs: 60_000,
    });
    expect(err).toBeInstanceOf(ChatTemplateLimitError);
    expect((err as Error).message).toContain('its steps reached 100001 but the bound is 100000');
  });

  it('and at the time bound when that comes first', () => {
    const { err, ms } = limitOf('{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}', {
      ...DEFAULT_TEMPLATE_BOUNDS,
      maxSteps: Number.MAX_SAFE_INTEGER,
      maxMs: 100,
    });
    expect(err).toBeInstanceOf(ChatTemplateLimitError);
    expect((err as ChatTemplateLimitError).limit).toBe('time');
    expect(ms).toBeLessThan(2000);
  });

  it('a string doubled in a loop stops at the output bound', () => {
    const { err } = limitOf("{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}");
    expect(err).toBeInstanceOf(ChatTemplateLimitError);
    expect((err as ChatTemplateLimitError).limit).toBe('output');
  });

  it('a macro that calls itself forever (passed to itself: macros do not see their own name) is a named error', () => {
    const { err } = limitOf('{% macro f(g, n) %}{{ g(g, n + 1) }}{% endmacro %}{{ f(f, 0) }}', {
      ...DEFAULT_TEMPLATE_BOUNDS,
      maxSteps: Number.MAX_SAFE_INTEGER,
    });
    expect(err).toBeInstanceOf(ChatTemplateLimitError);
  });

  it('long user text is not mistaken for a runaway template', () => {
    const long = 'word '.repeat(1_000_000);
    const t = new ChatTemplate(REAL, {});
    const out = t.render([{ role: 'user', content: [{ type: 'text', text: long }] }], true);
    expect(out.length).toBeGreaterThan(long.length);
  });

  it('template errors are still ChatTemplateError', () => {
    const { err } = limitOf('{{ messages[0].content.nope() }}');
    expect(err).toBeInstanceOf(ChatTemplateError);
  });
});
