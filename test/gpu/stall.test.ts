// The engine's stall watchdog (stallTimeoutMs): deliberately stuck engines fail within the limit with
// EngineStalledError, whose message names what they waited on, and a stalled engine refuses new requests.
// Nothing here waits for a timeout of the test itself.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine';
import { type EncoderSetup, startStandaloneEncoder } from '../../src/engine/standalone-encoder';
import { EngineStalledError } from '../../src/errors';
import { NodeDirSource } from '../../src/io/model-source-node';
import { decodeImageNode } from '../../src/processor/node';
import { localImageEncoder } from '../../src/remote/local-encoder';
import { RemoteEngine } from '../../src/remote/remote-engine';
import type { EncoderFaults } from '../helpers/faulty-encoder';
import { testEncoderStart, testEngine } from '../helpers/engine';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
let dir: string;
const SAMPLE = readFileSync(resolve(import.meta.dirname, '../../public/sample.png'));
const LIMIT_MS = 1500;

const IMAGE_REQUEST = {
  messages: [
    {
      role: 'user' as const,
      content: [
        { type: 'image' as const, image: SAMPLE },
        { type: 'text' as const, text: 'What is this?' },
      ],
    },
  ],
  max_tokens: 4,
};

/** `ask()` fails with EngineStalledError for `activity`, no sooner than the limit and well within three of it. */
async function stallsWithin(ask: () => Promise<unknown>, activity: string): Promise<{ err: unknown; e: EngineStalledError }> {
  const t0 = performance.now();
  const err = await ask().catch((x: unknown) => x);
  const tookMs = performance.now() - t0;
  expect(err).toBeInstanceOf(EngineStalledError);
  const e = err as EngineStalledError;
  expect(e.activity).toBe(activity);
  expect(tookMs).toBeGreaterThanOrEqual(LIMIT_MS);
  expect(tookMs).toBeLessThan(LIMIT_MS * 3 + 10_000);
  return { err, e };
}

beforeAll(async () => {
  dir = `${ensureTinyModels()}/smolvlm-tiny`;
  // A single pipeline compile takes seconds on SwiftShader, longer than these tests' limit: compile every
  // pipeline the engines below use first (the shared device keeps them), so only a real stall is quiet that long.
  (await testEngine(gpu(), dir, { kvCacheTokens: 512 })).destroy();
}, 300_000);

describe('the stall watchdog', () => {
  it('an engine whose media encoder never starts fails creation, naming the phase', async () => {
    const t0 = performance.now();
    const err = await Engine.create(
      {
        gpu: gpu(),
        source: new NodeDirSource(dir),
        decodeImage: decodeImageNode,
        startEncoder: () => new Promise(() => {}),
      },
      { stallTimeoutMs: LIMIT_MS, kvCacheTokens: 256 },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineStalledError);
    const e = err as EngineStalledError;
    expect(e.activity).toBe('creating the engine (compiling the language model and starting the media encoder)');
    expect(e.stalledMs).toBeGreaterThanOrEqual(LIMIT_MS);
    expect(JSON.parse(e.state)).toMatchObject({
      phase: 'compiling the language model and starting the media encoder',
      gpu: { pending: [] },
      // The last progress event, and when: the language model's warm-up went as far as its last step.
      lastProgress: { phase: 'compile' },
      lastProgressAtMs: expect.any(Number),
    });
    expect(e.message).toContain('the engine made no progress for');
    // The language model loaded and compiled first; the watchdog counts from the last thing that moved.
    expect(performance.now() - t0).toBeLessThan(120_000);
  });

  it('an engine whose device request never answers fails creation, naming the setup phase', async () => {
    // createEngine's device choice (requestAdapter, onnxruntime's start) and storage check run under the watch.
    const err = await Engine.createAfter(
      async (phase) => {
        phase("choosing the device (device: 'webgpu')");
        return new Promise(() => {});
      },
      { stallTimeoutMs: LIMIT_MS },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineStalledError);
    const e = err as EngineStalledError;
    expect(e.activity).toBe("creating the engine (choosing the device (device: 'webgpu'))");
    expect(JSON.parse(e.state)).toEqual({
      phase: "choosing the device (device: 'webgpu')",
      gpu: 'no WebGPU device (the CPU backend, or none made yet)',
    });
  });

  it('a request whose encode never settles fails with what the loop, the encoder and the GPU wait on', async () => {
    const engine = await testEngine(gpu(), dir, { stallTimeoutMs: LIMIT_MS, faults: { hangEncodes: true }, kvCacheTokens: 512 });
    try {
      const ask = () => engine.chat.completions.create(IMAGE_REQUEST);
      const { err, e } = await stallsWithin(ask, 'serving requests');
      const state = JSON.parse(e.state);
      expect(state.requestsInFlight).toBe(1);
      expect(state.loop.phase).toBe('asleep until an encode settles or a request arrives');
      expect(state.loop.requests).toHaveLength(1);
      expect(state.loop.requests[0].media).toContain('encoding');
      expect(state.encoder).toMatchObject({ mode: 'in-process' });
      expect(state.encoder.encodesRunning).toBe(1);
      expect(state.gpu.pending).toEqual([]);
      // The engine is done for: the next request fails at once with the same error.
      const again = await ask().catch((x: unknown) => x);
      expect(again).toBe(err);
      expect(engine.stats().scheduler).toMatchObject({ numWaiting: 0, numRunning: 0 });
    } finally {
      engine.destroy();
    }
  });

  it('an idle engine keeps no timer, and a busy one without a stall answers as before', async () => {
    const engine = await testEngine(gpu(), dir, { stallTimeoutMs: LIMIT_MS, kvCacheTokens: 512 });
    try {
      const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      const r = await engine.chat.completions.create({ messages: [{ role: 'user', content: 'Hello' }], max_tokens: 3 });
      expect(r.tessera.tokenIds).toHaveLength(3);
      // The watchdog's interval stops at its next check once nothing is in flight.
      await new Promise((resolve) => setTimeout(resolve, LIMIT_MS));
      expect(process.getActiveResourcesInfo().filter((x) => x === 'Timeout').length).toBeLessThanOrEqual(before);
      expect(engine.waitState()).toMatchObject({ requestsInFlight: 0, loop: { phase: 'stopped', requests: [] } });
    } finally {
      engine.destroy();
    }
  });
});

describe("the stall watchdog of a media encoder started alone (a remote engine's local encoder)", () => {
  /** The factories' setup, on the shared device (so gpu: undefined here: destroy() must not free it). */
  const setup =
    (faults: EncoderFaults, startEncoder?: EncoderSetup['startEncoder']) =>
    async (phase: (what: string) => void): Promise<EncoderSetup> => {
      phase('opening the checkpoint');
      const source = new NodeDirSource(dir);
      return {
        source,
        chosen: { choice: { backend: 'webgpu', reason: "the tests' shared device" } },
        gpu: undefined,
        startEncoder: startEncoder ?? testEncoderStart(gpu(), source, { faults }),
      };
    };

  it('a start whose encoder never starts fails, naming the phase', async () => {
    const t0 = performance.now();
    const err = await startStandaloneEncoder(
      setup({}, () => new Promise(() => {})),
      { stallTimeoutMs: LIMIT_MS },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineStalledError);
    const e = err as EngineStalledError;
    expect(e.activity).toBe('starting a media encoder alone (loading the vision tower and compiling its pipelines)');
    expect(JSON.parse(e.state)).toMatchObject({ phase: 'loading the vision tower and compiling its pipelines' });
    expect(performance.now() - t0).toBeLessThan(LIMIT_MS * 3 + 10_000);
  });

  it("a remote engine's request whose local encode never settles fails with what the encoder waits on; nothing reaches the server", async () => {
    const local = await startStandaloneEncoder(setup({ hangEncodes: true }), { stallTimeoutMs: LIMIT_MS });
    const posts: string[] = [];
    // The server's side is not what this test is about: it serves the model list, and records any POST.
    const server: typeof fetch = async (input, init) => {
      if (init?.method === 'POST') {
        posts.push(String(input));
        return new Response('{}', { status: 500 });
      }
      return Response.json({ data: [{ id: 'tiny' }] });
    };
    const remote = await RemoteEngine.connect(localImageEncoder(local), { baseURL: 'http://server.test/v1', model: 'tiny', fetch: server });
    try {
      const ask = () => remote.chat.completions.create(IMAGE_REQUEST);
      const { err, e } = await stallsWithin(ask, 'encoding images (a media encoder started alone)');
      const state = JSON.parse(e.state);
      expect(state.imagesWaiting).toBe(1);
      expect(state.encoder).toMatchObject({ mode: 'in-process', encodesRunning: 1 });
      // The encoder is done for: the next request fails at once with the same error.
      expect(await ask().catch((x: unknown) => x)).toBe(err);
      expect(posts).toEqual([]);
      expect(remote.stats().failedRequests).toBe(2);
    } finally {
      remote.destroy();
    }
  });

  it('an encoder without a stall encodes as before, and keeps no timer once idle', async () => {
    // A limit no real encode comes near: one forward pass is one GPU submission, with nothing to count
    // until it settles, and on a loaded CPU adapter the sample's takes seconds. The watchdog checks every
    // 5 s at this limit (a quarter of it, at most 5 s).
    const limitMs = 20_000;
    const local = await startStandaloneEncoder(setup({}), { stallTimeoutMs: limitMs });
    try {
      const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      const e = await localImageEncoder(local).embeddings(SAMPLE);
      expect(e.data.length).toBe(e.shape.reduce((a, b) => a * b, 1));
      expect(e.data.every(Number.isFinite)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 5_500));
      expect(process.getActiveResourcesInfo().filter((x) => x === 'Timeout').length).toBeLessThanOrEqual(before);
    } finally {
      local.destroy();
    }
  });
});
