// Errors of a request's media: images that do not decode or are too large, image_url fetches, videos.

import { TesseraError } from './base';

/** Bytes given as an image could not be decoded (not an image, truncated, or an unsupported format). */
export class ImageDecodeError extends TesseraError {
  override readonly name = 'ImageDecodeError';
  readonly code = 'IMAGE_DECODE';
}

/** An image has more pixels than the decoder accepts. */
export class ImageTooLargeError extends TesseraError {
  override readonly name = 'ImageTooLargeError';
  readonly code = 'IMAGE_TOO_LARGE';
  constructor(
    readonly width: number,
    readonly height: number,
    readonly maxPixels: number,
  ) {
    super(
      `image is ${width}x${height} = ${width * height} pixels but the decoder accepts at most ${maxPixels}; ` +
        'downscale it before sending it.',
    );
  }
}

/** An image_url (or video_url) could not be fetched: network error, HTTP status, timeout, too many bytes, bad scheme. */
export class ImageFetchError extends TesseraError {
  override readonly name = 'ImageFetchError';
  readonly code = 'IMAGE_FETCH';
  constructor(
    readonly url: string,
    readonly reason: 'network' | 'status' | 'timeout' | 'too-large' | 'scheme' | 'redirect',
    detail: string,
    options?: { cause?: unknown },
    readonly media: 'image' | 'video' | 'audio' = 'image',
  ) {
    super(`could not fetch the ${media} at ${url}: ${detail}`, options);
  }
}

/** media.blockPrivateNetwork is on and an image_url (or a redirect) points at a private, loopback or link-local host. */
export class PrivateNetworkRefusedError extends TesseraError {
  override readonly name = 'PrivateNetworkRefusedError';
  readonly code = 'PRIVATE_NETWORK_REFUSED';
  constructor(
    readonly url: string,
    readonly address: string,
  ) {
    super(
      `refused to fetch ${url}: ${address} is a private, loopback or link-local address and media.blockPrivateNetwork ` +
        'is on; send the image bytes instead, or use a public URL.',
    );
  }
}

/** A video part was sent to a checkpoint without video settings (no `video_sampling`: not SmolVLM2). */
export class VideoNotSupportedError extends TesseraError {
  override readonly name = 'VideoNotSupportedError';
  readonly code = 'VIDEO_NOT_SUPPORTED';
  /** `reason`: why this checkpoint takes no video, when it is not a missing "video_sampling". */
  constructor(
    readonly where: string,
    reason?: string,
  ) {
    super(
      `the checkpoint at ${where} ${reason ?? 'has no video settings (preprocessor_config.json has no "video_sampling")'}, so it ` +
        'cannot take video parts; use a SmolVLM2 checkpoint (model_type smolvlm, e.g. SmolVLM2-256M-Video-Instruct), or send frames as images.',
    );
  }
}

/** The bytes of a video part could not be read as a video (not a container Tessera reads, or cut short). */
export class VideoDecodeError extends TesseraError {
  override readonly name = 'VideoDecodeError';
  readonly code = 'VIDEO_DECODE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The clip has no video track (an audio-only file, for example). */
export class VideoTrackMissingError extends TesseraError {
  override readonly name = 'VideoTrackMissingError';
  readonly code = 'VIDEO_TRACK_MISSING';
  constructor(
    readonly numBytes: number,
    readonly tracks: string,
  ) {
    super(`the ${numBytes}-byte clip has no video track (its tracks: ${tracks || 'none'}); send a file with video in it.`);
  }
}

/** The clip's video codec cannot be decoded here (WebCodecs in this browser, or ffmpeg in Node). */
export class VideoCodecUnsupportedError extends TesseraError {
  override readonly name = 'VideoCodecUnsupportedError';
  readonly code = 'VIDEO_CODEC_UNSUPPORTED';
  constructor(
    readonly codec: string,
    readonly decoder: string,
  ) {
    super(
      `the clip's video codec '${codec}' cannot be decoded by ${decoder}; re-encode it as H.264 (MP4) or VP8/VP9 (WebM), ` +
        'or send the frames as a list of images with timestamps ({ frames: [{ image, timestamp }] }).',
    );
  }
}

/** The clip has no frames, or lasts 0 seconds: there is nothing to sample. */
export class VideoEmptyError extends TesseraError {
  override readonly name = 'VideoEmptyError';
  readonly code = 'VIDEO_EMPTY';
  constructor(
    readonly numFrames: number,
    readonly durationSeconds: number,
  ) {
    super(
      `the clip has ${numFrames} frames over ${durationSeconds} seconds, so no frame can be sampled; send a clip that lasts longer than 0 seconds.`,
    );
  }
}

/** Node decodes MP4/WebM with an `ffmpeg` binary, and none was found. */
export class FfmpegMissingError extends TesseraError {
  override readonly name = 'FfmpegMissingError';
  readonly code = 'FFMPEG_MISSING';
  constructor(
    readonly command: string,
    detail: string,
    readonly purpose: 'video' | 'audio' = 'video',
  ) {
    super(
      purpose === 'video'
        ? `decoding MP4/WebM video in Node needs the ffmpeg program, and '${command}' could not be run (${detail}); install ` +
            'it (Debian/Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg) or put it on PATH, or send the frames ' +
            'as a list of images with timestamps. Animated GIF and WebP need no ffmpeg.'
        : `decoding audio other than WAV in Node needs the ffmpeg program, and '${command}' could not be run (${detail}); install ` +
            'it (Debian/Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg) or put it on PATH, or send WAV or PCM.',
    );
  }
}

/** The bytes of an audio part could not be read as audio (not a format Tessera reads, cut short, or empty). */
export class AudioDecodeError extends TesseraError {
  override readonly name = 'AudioDecodeError';
  readonly code = 'AUDIO_DECODE';
}

/** An audio part was sent to a checkpoint without an audio tower (an image model such as SmolVLM). */
export class AudioNotSupportedError extends TesseraError {
  override readonly name = 'AudioNotSupportedError';
  readonly code = 'AUDIO_NOT_SUPPORTED';
  constructor(readonly where: string) {
    super(
      `the checkpoint at ${where} has no audio encoder, so it cannot take audio parts; use an audio checkpoint ` +
        '(model_type voxtral, e.g. Voxtral-Mini-3B-2507), or send a transcript as text.',
    );
  }
}

/** An image or video part was sent to a checkpoint without a vision tower (an audio model such as Voxtral). */
export class ImageNotSupportedError extends TesseraError {
  override readonly name = 'ImageNotSupportedError';
  readonly code = 'IMAGE_NOT_SUPPORTED';
  constructor(
    readonly where: string,
    readonly part: 'image' | 'video',
  ) {
    super(
      `the checkpoint at ${where} has no vision tower, so it cannot take ${part} parts; use an image checkpoint ` +
        '(model_type idefics3 or smolvlm, e.g. SmolVLM-256M-Instruct), or send text and audio only.',
    );
  }
}

/**
 * An audio part is longer than the context window can hold: decoding stopped at the first 30-second chunk
 * past the limit, so a 2-hour file is neither decoded whole nor kept in memory.
 */
export class AudioTooLongError extends TesseraError {
  override readonly name = 'AudioTooLongError';
  readonly code = 'AUDIO_TOO_LONG';
  constructor(
    /** Seconds decoded when it stopped (the audio is at least this long). */
    readonly seconds: number,
    /** The most seconds the request could take. */
    readonly maxSeconds: number,
    readonly tokensPerChunk: number,
    readonly contextWindow: number,
  ) {
    super(
      `the audio is longer than ${maxSeconds} s (decoding stopped at ${seconds.toFixed(1)} s): each 30-second chunk takes ` +
        `${tokensPerChunk} prompt tokens and the context window is ${contextWindow} tokens (prompt + max_tokens); send a ` +
        'shorter clip, lower max_tokens, or raise the engine option kvCacheTokens.',
    );
  }
}
