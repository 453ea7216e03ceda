// video-prompt.ts: the text a SmolVLM2 video part becomes. Follows HF `SmolVLMProcessor.process_video`
// (processing_smolvlm.py) with the constants of video_processing_smolvlm.py:
//
//   "You are provided the following series of {num2words(N)} frames from a {H:MM:SS} [H:MM:SS] video.\n"
//   for each frame:  "\nFrame from {MM:SS}:" <fake_token_around_image><global-img><image>*S<fake_token_around_image>
//   "\n\n"
//
// N: HF prints pixel_values.shape[1], the frame count PADDED across every video of the call, so in a request
// with two clips of 3 and 5 frames both intros say "five" (reproduced: pass the largest count). The
// duration is str(timedelta(seconds=int(duration))); a timestamp is (int(t // 60), int(t % 60)) printed
// %02d:%02d (minutes are not wrapped into hours: 2 h prints "120:00"). S: image_seq_len, or fewer tokens
// per frame when pruning (EVS) sized the frames before encoding.
//
// HF renders video conversations with its built-in template (DEFAULT_CHAT_TEMPLATE below), not the
// checkpoint's, whose template has no video branch (the upstream files emit nothing for a video part).

import { InternalError } from '../errors';
import type { ProcessorConfig } from './processor-config';

/** HF `processing_smolvlm.DEFAULT_CHAT_TEMPLATE`: the template HF uses whenever a conversation has a video. */
export const SMOLVLM_VIDEO_CHAT_TEMPLATE =
  "<|im_start|>{% for message in messages %}{{message['role'] | capitalize}}{% if message['content'][0]['type'] == 'image' %}{{':'}}{% else %}{{': '}}{% endif %}" +
  "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{line['text']}}{% elif line['type'] == 'image' %}{{ '<image>' }}" +
  "{% elif line['type'] == 'video' %}{{ '<video>' }}{% endif %}{% endfor %}<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}";

/** The marker that template writes for a video part (HF `video_token`; not a token of the vocabulary). */
export const VIDEO_MARKER = '<video>';

const ONES = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** 1..999 as num2words writes it: "one hundred and twenty-one". */
function below1000(n: number): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  const restWords = rest === 0 ? '' : rest < 20 ? ONES[rest] : TENS[Math.floor(rest / 10)] + (rest % 10 ? `-${ONES[rest % 10]}` : '');
  if (hundreds === 0) return restWords;
  return `${ONES[hundreds]} hundred${rest ? ` and ${restWords}` : ''}`;
}

/**
 * English cardinal words as the `num2words` package (lang "en") writes them, for 0 <= n < 10^9:
 * 64 "sixty-four", 101 "one hundred and one", 1001 "one thousand and one", 1100 "one thousand, one hundred".
 */
export function numberToWords(n: number): string {
  if (!Number.isInteger(n) || n < 0 || n >= 1e9) throw new InternalError(`numberToWords: ${n} is outside 0..999999999`);
  if (n === 0) return 'zero';
  const groups: Array<[number, string]> = [
    [Math.floor(n / 1e6), 'million'],
    [Math.floor(n / 1e3) % 1000, 'thousand'],
    [n % 1000, ''],
  ];
  let out = '';
  for (const [value, scale] of groups) {
    if (value === 0) continue;
    const words = below1000(value) + (scale ? ` ${scale}` : '');
    // num2words joins the last (units) group with "and" when it is below 100, any other group with a comma.
    if (out) out += !scale && value < 100 ? ' and ' : ', ';
    out += words;
  }
  return out;
}

/** str(datetime.timedelta(seconds=s)) for an integer s >= 0: "0:00:04", "2:00:00", "1 day, 1:00:00". */
export function timedeltaString(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds < 0) throw new InternalError(`timedeltaString: ${seconds} is not a non-negative integer`);
  const days = Math.floor(seconds / 86400);
  const s = seconds % 86400;
  const hms = `${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
  return days ? `${days} day${days === 1 ? '' : 's'}, ${hms}` : hms;
}

/** Python's float floor division `x // y` for x >= 0, y > 0 (CPython float_floor_div). */
function pyFloorDiv(x: number, y: number): number {
  const mod = x % y;
  const div = (x - mod) / y;
  let floor = Math.floor(div);
  if (div - floor > 0.5) floor += 1;
  return floor;
}

/** HF's frame timestamp "MM:SS" for t seconds: (int(t // 60), int(t % 60)), each %02d. */
export function frameTimestamp(t: number): string {
  if (!(t >= 0)) throw new InternalError(`frameTimestamp: ${t} is not a non-negative number of seconds`);
  const minutes = Math.trunc(pyFloorDiv(t, 60));
  const secs = Math.trunc(t % 60);
  return `${String(minutes).padStart(2, '0')}:${String(secs).padStart(2, '0')}`;
}

export interface VideoPromptInput {
  /** Sampled frames' timestamps (seconds), in order. */
  timestamps: readonly number[];
  /** Clip duration in seconds (printed as int(duration)). */
  duration: number;
  /** `<image>` tokens per frame (image_seq_len each, or EVS's pre-sized counts). */
  tokensPerFrame: readonly number[];
  /** The number the intro prints: the largest frame count among the request's videos (see header). */
  introFrameCount: number;
}

/** The expansion of one video part (HF `process_video`'s `image_prompt_strings`). */
export function videoPromptString(
  v: VideoPromptInput,
  config: Pick<ProcessorConfig, 'fakeImageToken' | 'imageToken' | 'globalImageToken'>,
): string {
  if (v.timestamps.length !== v.tokensPerFrame.length || v.timestamps.length === 0) {
    throw new InternalError(`videoPromptString: ${v.timestamps.length} timestamps for ${v.tokensPerFrame.length} frame token counts`);
  }
  const { fakeImageToken: fake, imageToken: img, globalImageToken: global } = config;
  let s = `You are provided the following series of ${numberToWords(v.introFrameCount)} frames from a ${timedeltaString(Math.trunc(v.duration))} [H:MM:SS] video.\n`;
  v.timestamps.forEach((t, i) => {
    s += `\nFrame from ${frameTimestamp(t)}:${fake}${global}${img.repeat(v.tokensPerFrame[i])}${fake}`;
  });
  return `${s}\n\n`;
}
