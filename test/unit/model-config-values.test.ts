// Numeric config values that would silently break the math are refused by name, before any upload: an
// epsilon of 0 or below, a RoPE base of 0 or below, Infinity (1e999 parses as Infinity), an image token
// outside the vocabulary, processor values that scale pixels by Infinity or resize to a billion pixels.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ModelConfigError, ProcessorConfigError } from '../../src/errors';
import { parseModelConfig } from '../../src/families/registry';
import { parseImageProcessorConfig } from '../../src/processor/processor-config';

const REAL_DIR = resolve(import.meta.dirname, '../fixtures/models/SmolVLM-256M-Instruct');
const REAL = readFileSync(resolve(REAL_DIR, 'config.json'), 'utf8');
const PRE = JSON.parse(readFileSync(resolve(REAL_DIR, 'preprocessor_config.json'), 'utf8'));

/** The real config text with one `"key": value` replaced textually (so 1e999 stays what JSON.parse makes of it). */
function withValue(section: 'text_config' | 'vision_config' | '', key: string, value: string): unknown {
  const c = JSON.parse(REAL);
  const target = section ? c[section] : c;
  target[key] = '__VALUE__';
  return JSON.parse(JSON.stringify(c).replace('"__VALUE__"', value));
}

describe('config values that break the math', () => {
  it('the real config parses', () => {
    expect(parseModelConfig(JSON.parse(REAL)).text.rmsNormEps).toBe(1e-5);
  });

  for (const [section, key, bad] of [
    ['text_config', 'rms_norm_eps', '0'],
    ['text_config', 'rms_norm_eps', '-1e-5'],
    ['text_config', 'rms_norm_eps', '1e999'],
    ['text_config', 'rope_theta', '0'],
    ['text_config', 'rope_theta', '-10000'],
    ['text_config', 'rope_theta', '1e999'],
    ['vision_config', 'layer_norm_eps', '-1'],
    ['vision_config', 'layer_norm_eps', '5'],
    ['', 'image_token_id', '49280'],
    ['', 'tie_word_embeddings', '"yes"'],
    ['text_config', 'tie_word_embeddings', '1'],
  ] as const) {
    it(`${section ? `${section}.` : ''}${key} = ${bad} is a ModelConfigError naming the field`, () => {
      const err = (() => {
        try {
          parseModelConfig(withValue(section, key, bad));
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(ModelConfigError);
      expect((err as Error).message).toContain(key);
    });
  }

  it('processor values: an infinite rescale factor and a huge resize are refused', () => {
    expect(() => parseImageProcessorConfig({ ...PRE, rescale_factor: Number.POSITIVE_INFINITY })).toThrow(ProcessorConfigError);
    expect(() => parseImageProcessorConfig({ ...PRE, size: { longest_edge: 1_000_000_000 } })).toThrow(ProcessorConfigError);
  });
});
