"""Independent reference of SmolVLM2's video prompt (HF `SmolVLMProcessor` + `SmolVLMVideoProcessor`).

Written from reading transformers' processing_smolvlm.py / video_processing_smolvlm.py / video_utils.py,
not copied. It uses the very libraries HF uses for the parts that are easy to get subtly wrong: numpy's
linspace/unique for the frame indices, Python's round() (ties to even), num2words for the frame count,
datetime.timedelta for the duration, and jinja2 for the chat template. Writes
test/fixtures/goldens/video-reference.json, which test/unit/video-prompt-parity.test.ts compares with
Tessera's processor (token ids via transformers.js's tokenizer on the same tokenizer.json).

Run: /usr/bin/python3 test/reference/video_reference.py   (Debian: python3-numpy, python3-num2words, python3-jinja2)
"""

import json
import os
import re
from datetime import timedelta

import jinja2
import numpy as np
from num2words import num2words

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "test", "fixtures", "goldens", "video-reference.json")

# HF processing_smolvlm.DEFAULT_CHAT_TEMPLATE (the template HF switches to for conversations with video).
VIDEO_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{message['role'] | capitalize}}{% if message['content'][0]['type'] == 'image' %}{{':'}}{% else %}{{': '}}{% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{line['text']}}{% elif line['type'] == 'image' %}{{ '<image>' }}"
    "{% elif line['type'] == 'video' %}{{ '<video>' }}{% endif %}{% endfor %}<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)


def sample_indices(total, video_fps, max_frames, fps, skip_secs=1):
    """SmolVLM sample_frames on decoder metadata: duration = total / video_fps (pyav/decord backends)."""
    duration = total / video_fps
    desired = min(int(round(fps * duration)), max_frames)
    if desired < 1:
        desired = 1
    start, end = 0, total - 1
    if skip_secs > 0 and (duration - 2 * skip_secs) > (max_frames * fps):
        start = int(skip_secs * video_fps)
        end = int(total - skip_secs * video_fps)
    start = max(0, start)
    end = min(end, total - 1)
    if start >= end:
        start, end = 0, total - 1
    indices = np.unique(np.linspace(start, end, desired, dtype=int))
    return [int(i) for i in indices], duration


def video_expansion(timestamps, duration, frame_count, image_seq_len):
    """process_video's replacement for one <video> marker."""
    block = "<fake_token_around_image><global-img>" + "<image>" * image_seq_len + "<fake_token_around_image>"
    text = "You are provided the following series of {} frames from a {} [H:MM:SS] video.\n".format(
        num2words(frame_count), str(timedelta(seconds=int(duration)))
    )
    for t in timestamps:
        minutes, seconds = int(t // 60), int(t % 60)
        text += "\nFrame from {:02d}:{:02d}:".format(minutes, seconds) + block
    return text + "\n\n"


def render(messages):
    env = jinja2.Environment()
    return env.from_string(VIDEO_TEMPLATE).render(messages=messages, add_generation_prompt=True)


def case(name, config, clips, messages):
    """clips: list of (total_frames, video_fps); messages: HF-style, one {'type': 'video'} per clip."""
    sampled = []
    for total, video_fps in clips:
        indices, duration = sample_indices(total, video_fps, config["max_frames"], config["fps"])
        sampled.append(
            {
                "numFrames": total,
                "fps": video_fps,
                "duration": duration,
                "indices": indices,
                "timestamps": [i / video_fps for i in indices],
            }
        )
    text = render(messages)
    # The frame count every intro prints: pixel_values.shape[1], padded across the clips of the call.
    frame_count = max(len(s["indices"]) for s in sampled)
    for s in sampled:
        assert "<video>" in text
        text = text.replace("<video>", video_expansion(s["timestamps"], s["duration"], frame_count, config["image_seq_len"]), 1)
    # Stored compactly: each run of N "<image>" becomes "<image*N>" (the test expands it back).
    packed = re.sub(r"(?:<image>)+", lambda m: "<image*{}>".format(len(m.group(0)) // len("<image>")), text)
    return {"name": name, "config": config, "clips": sampled, "messages": messages, "text": packed}


def user(*parts):
    return {"role": "user", "content": list(parts)}


VIDEO = {"type": "video"}


def text(t):
    return {"type": "text", "text": t}


def main():
    real = {"checkpoint": "test/fixtures/models/SmolVLM2-500M-Video-Instruct", "fps": 1, "max_frames": 64, "image_seq_len": 64}
    tiny = {"checkpoint": "public/models/smolvlm2-video-tiny", "fps": 1, "max_frames": 8, "image_seq_len": 16}
    ask = [user(VIDEO, text("What happens in this video?"))]
    cases = [
        case("0.5 s at 10 fps (shorter than one sampling interval: round(0.5) is 0, one frame)", real, [(5, 10.0)], ask),
        case("0.9 s at 30 fps (under one interval)", real, [(27, 30.0)], ask),
        case("2.5 s at 30 fps (round(2.5) is 2: ties to even)", real, [(75, 30.0)], ask),
        case("4 s at 5 fps", real, [(20, 5.0)], ask),
        case("10 s at 30 fps", real, [(300, 30.0)], ask),
        case("65 s at 24 fps (max_frames, no skip)", real, [(1560, 24.0)], ask),
        case("90 s at 29.97 fps (longer than max_frames: 1 s skipped at each end)", real, [(2697, 30000 / 1001)], ask),
        case("2 hours at 1 fps", real, [(7200, 1.0)], ask),
        case("2 hours at 30 fps", real, [(216000, 30.0)], ask),
        case(
            "system message, text before the video, a second turn",
            real,
            [(40, 10.0)],
            [
                {"role": "system", "content": [text("You answer briefly.")]},
                user(text("Look at this clip: "), VIDEO, text(" What colour is it?")),
                {"role": "assistant", "content": [text("Blue.")]},
                user(text("And at the end?")),
            ],
        ),
        case("two clips in one message (3 and 5 frames: both intros say five)", real, [(30, 10.0), (50, 10.0)], [user(VIDEO, text("and"), VIDEO, text("Compare them."))]),
        case("tiny: 4 s at 5 fps", tiny, [(20, 5.0)], ask),
        case("tiny: 12 s at 2 fps (longer than max_frames 8)", tiny, [(24, 2.0)], ask),
        case("tiny: 0.5 s at 10 fps", tiny, [(5, 10.0)], ask),
    ]
    words = {str(n): num2words(n) for n in list(range(0, 1001)) + [1100, 1121, 2345] + [9999, 10001, 12345, 100000, 123456, 1000000, 1000001, 1001000, 2000100]}
    durations = {str(s): str(timedelta(seconds=s)) for s in [0, 4, 59, 60, 3599, 3600, 7200, 86399, 86400, 90000, 200000]}
    timestamps = {repr(t): "{:02d}:{:02d}".format(int(t // 60), int(t % 60)) for t in [0.0, 0.5, 59.999, 60.0, 61.5, 119.99999999999999, 3599.9, 7199.0, 7200.0]}
    with open(OUT, "w") as f:
        json.dump({"cases": cases, "num2words": words, "timedelta": durations, "timestamps": timestamps}, f, indent=1)
        f.write("\n")
    print("wrote", OUT, len(cases), "cases")


if __name__ == "__main__":
    main()
