// A request's video options (tessera.videoPruning, tessera.videoThumbnails), validated.

import { InvalidMessageError } from '../../errors';
import { checkPruningRate } from '../../encoder/video/evs';
import type { VideoIntakeOptions } from './intake-video';
import type { ChatCompletionRequest } from '../types';

export function videoOptionsOf(req: ChatCompletionRequest): VideoIntakeOptions {
  const pruneRate = req.tessera?.videoPruning ?? 0;
  checkPruningRate(pruneRate);
  const thumbnailEdge = req.tessera?.videoThumbnails ?? 0;
  if (!Number.isInteger(thumbnailEdge) || thumbnailEdge < 0 || thumbnailEdge > 4096) {
    throw new InvalidMessageError(
      `the request option tessera.videoThumbnails must be a whole number of pixels from 1 to 4096 (0 or unset: none), got ${JSON.stringify(thumbnailEdge)}.`,
    );
  }
  return { pruneRate, thumbnailEdge };
}
