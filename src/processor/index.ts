// The SmolVLM / Idefics3 processor, browser-safe part (no Node imports). Node callers add ./node.

export { Idefics3Processor, type PreparedPrompt, type ProcessorLoadOptions } from './processor';
export { readJson, type ModelFiles } from './files';
export { TextTokenizer, type Segment, type SegmentEncoding } from './tokenizer';
export { ChatTemplate, loadChatTemplateSource, ROLES, type Role, type TemplateMessage, type RenderedPiece } from './chat-template';
export {
  splitMessages,
  type ChatMessage,
  type ContentPart,
  type ImageInput,
  type ImagePart,
  type TextPart,
  type VideoInput,
  type VideoPart,
  type VideoFrameInput,
} from './messages';
export {
  decodeImageBrowser,
  toRgb,
  MAX_DECODE_PIXELS,
  type DecodedImage,
  type DecodeOptions,
  type ImageDecoder,
  type RawImage,
} from './image-decode';
export { imageLayout, longestEdgeResize, visionEncoderResize, MAX_IMAGE_SIZE, type ImageLayout, type Size } from './image-layout';
export {
  imageToTiles,
  normalizeTiles,
  processImage,
  shrinkTarget,
  PRESHRINK_GAP,
  PRESHRINK_MIN_PIXELS,
  type ProcessedImage,
} from './image-processor';
export { resampleRgb, resampleFilterFromPil, type ResampleFilter, type RgbImage } from './resample';
export { loadProcessorConfig, parseImageProcessorConfig, type ImageProcessorConfig, type ProcessorConfig } from './processor-config';
export {
  buildPromptPlan,
  imagePromptString,
  type ImagePlaceholder,
  type PlaceholderRun,
  type PlanOptions,
  type PromptPlan,
  type VideoLayout,
  type VideoPlaceholder,
} from './prompt';
export { parseVideoProcessorConfig, type VideoProcessorConfig } from './video-config';
export { sampleFrames, type FrameSample, type VideoMetadata } from './video-sampling';
export { videoPromptString, frameTimestamp, numberToWords, timedeltaString, SMOLVLM_VIDEO_CHAT_TEMPLATE } from './video-prompt';
export { frameToTile, frameThumbnail, videoResizeSize, type FrameThumbnail } from './video-frames';
export { loadStopTokenIds } from './stop-tokens';
export { StreamingDetokenizer } from './detokenizer';
