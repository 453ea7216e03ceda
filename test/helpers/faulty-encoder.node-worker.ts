// A test-only encoder worker: workers/encoder.node-worker.ts with the faults of faulty-encoder.ts applied,
// given as the worker's workerData. test/gpu/global-setup.ts builds it with the package's own Vite
// config (so it is minified like dist/encoder-worker.js) into dist-test/, which the package never ships.

import { parentPort, workerData } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { EncoderCore } from '../../src/encoder/encoder-core';
import { transferringApi } from '../../src/encoder/expose';
import { nodeModelSourceFromRef } from '../../src/encoder/model-ref-node';
import { createNodeGpuContext } from '../../src/gpu/node';
import { installErrorTransfer } from '../../src/protocol/errors';
import { decodeImageNode } from '../../src/processor/image-decode-node';
import { withFaults, type EncoderFaults } from './faulty-encoder';

if (!parentPort) throw new Error('faulty-encoder.node-worker must run in a worker thread');
installErrorTransfer();
const core = new EncoderCore({ createGpu: () => createNodeGpuContext(), openModel: nodeModelSourceFromRef, decodeImage: decodeImageNode });
Comlink.expose(withFaults(transferringApi(core), (workerData ?? {}) as EncoderFaults), nodeEndpoint(parentPort));
