// The built `tessera serve` command (dist/cli.js, as the package's bin runs it; built by this project's
// global setup) on the bundled tiny checkpoint: it prints where it listens, answers curl and the openai
// client with the same text, and exits 0 on SIGTERM. On the CPU backend, so the load takes a second (the
// HTTP behaviour itself is tested in test/cpu/http-server.test.ts).

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { BUILT_CLI, startServeProcess, tinyServeArgs } from '../helpers/serve-process';
import { ensureTinyModels } from '../helpers/tiny-models';

describe('the built command', () => {
  it('is executable, so `npx tessera` runs in a clone after the build (npm sets the bit only on install)', async () => {
    const { stdout } = await promisify(execFile)(BUILT_CLI, ['--help']);
    expect(stdout).toMatch(/^usage: tessera <command>/);
    expect(stdout).toContain('serve options');
  });
});

describe('tessera serve (the built command)', () => {
  it('answers curl and the openai client alike, and stops on SIGTERM', async () => {
    const model = `${ensureTinyModels()}/smolvlm-tiny`;
    const { child, url, events, exited } = await startServeProcess(tinyServeArgs(model));
    try {
      expect(events[0].event).toBe('listening');
      const body = JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4 });
      const { stdout } = await promisify(execFile)('curl', [
        '-s',
        `${url}/v1/chat/completions`,
        '-H',
        'Content-Type: application/json',
        '-d',
        body,
      ]);
      const answer = JSON.parse(stdout);
      expect(answer).toMatchObject({ object: 'chat.completion', model: 'tiny', usage: { completion_tokens: 4 } });
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'none', maxRetries: 0 });
      let text = '';
      const stream = await client.chat.completions.create({
        model: 'tiny',
        messages: [{ role: 'user', content: 'Hello' }],
        max_tokens: 4,
        stream: true,
      });
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(text).toBe(answer.choices[0].message.content);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(events.at(-1)?.event).toBe('stopping');
    } finally {
      child.kill('SIGKILL');
    }
  });
});
