// What intake (intake.ts, intake-audio.ts) hands the engine for one request.

import type { PromptPlan } from '../../processor/prompt';
import type { PreparedAudio } from '../../protocol/encoder';
import type { RequestVideo } from './intake-video';
import type { RequestMedia } from './request-media';

/** What intake hands the engine for one request: the prompt plan and its media items. */
export interface IntakePlan {
  plan: PromptPlan;
  /** In prompt order (the scheduler's order). */
  media: RequestMedia[];
  videos: RequestVideo[];
  /** The audio parts, decoded (message order). */
  audios: PreparedAudio[];
}
