// One media item of a request as intake hands it to the engine (intake.ts, intake-video.ts): what the
// serve loop splices and what the request reports about its media.

import type { ImagePlaceholder } from '../../processor/prompt';
import type { PreparedMedia } from '../../protocol/encoder';
import type { MediaInfo } from '../types';

/**
 * One media item of a request (an image, a video frame, or a whole pruned video): its key and layout, where
 * its placeholder runs are, and its embeddings once known.
 */
export interface RequestMedia {
  prepared: PreparedMedia;
  placeholder: Pick<ImagePlaceholder, 'offset' | 'length' | 'runs'>;
  /** size.longest_edge it was prepared at (lower after a reduced-resolution retry); a video item's tile size. */
  longestEdge: number;
  /** [numTokens, hidden] f32 on the host, shared with the cache: never modify it. */
  data?: Float32Array;
  source?: MediaInfo['source'];
  /** Set for a video's item: which video part, and which sampled frame (absent: the whole pruned video). */
  video?: { videoIndex: number; frame?: number };
  /** Set for an audio chunk: which audio part, and which 30-second chunk of it. */
  audio?: { audioIndex: number; chunk: number };
}
