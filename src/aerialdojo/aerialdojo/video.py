"""An episode's recorded camera views as a video with a HUD (``aerialdojo replay --video``).

The evaluator records every ``image_decimation``-th observation set; each recorded set of the
episode becomes one frame: its views side by side over a band that says the step, the action
that produced it and the distance to the target (from the episode event of the same stamp:
events and images of one step carry one stamp). ROS-free: rosbags reads the bag, PyAV
(FFmpeg) encodes H.264.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
from PIL import Image, ImageDraw, ImageFont
from rosbags.highlevel import AnyReader

from aerialdojo.errors import BagError
from aerialdojo.events import EventKind, event_position, event_stamp_ns
from aerialdojo.image_codec import compressed_to_array, image_to_array

EVENTS_TOPIC = "/aerialdojo/episode_events"
#: Recorded camera topics: ``/<agent>/camera/<view>/image`` or its ``/compressed`` form.
IMAGE_TOPIC = re.compile(
    r"^/(?P<agent>[^/]+)/camera/(?P<view>[^/]+)/image(?P<compressed>/compressed)?$"
)
#: Height of the HUD band, pixels.
HUD_PIXELS = 44
HUD_BACKGROUND = (20, 20, 20)
#: Frames per second of a replay video unless told otherwise.
DEFAULT_FPS = 2.0


@dataclass(frozen=True)
class HudState:
    """What the HUD says about one frame."""

    step: int
    budget: int
    action: str
    distance_m: float
    ending: str = ""


@dataclass(frozen=True)
class Frame:
    """One recorded observation set of the episode.

    Attributes:
        stamp_ns: the set's stamp.
        views: view label (``uav/front``) -> RGB pixels, in topic order.
        hud: the state the episode was in at that stamp.
    """

    stamp_ns: int
    views: dict[str, np.ndarray]
    hud: HudState


def _rgb(pixels: np.ndarray) -> np.ndarray:
    if pixels.ndim == 2:
        return np.repeat(pixels[:, :, None], 3, axis=2).astype(np.uint8)
    return np.ascontiguousarray(pixels[:, :, :3]).astype(np.uint8)


def episode_frames(bag: Path, episode_id: str) -> list[Frame]:
    """The recorded observation sets of the last attempt of ``episode_id``, with its events.

    Raises:
        BagError: not a bag, no such episode, or no recorded camera view in the episode.
    """
    events: list[Any] = []
    images: dict[int, dict[str, np.ndarray]] = {}
    try:
        with AnyReader([bag]) as reader:
            wanted = [
                c
                for c in reader.connections
                if c.topic == EVENTS_TOPIC or IMAGE_TOPIC.match(c.topic)
            ]
            for connection, _, raw in reader.messages(connections=wanted):
                message: Any = reader.deserialize(raw, connection.msgtype)
                match = IMAGE_TOPIC.match(connection.topic)
                if match is None:
                    if message.episode_id == episode_id:
                        events.append(message)
                    continue
                pixels = (
                    compressed_to_array(message)[0]
                    if match["compressed"]
                    else image_to_array(message)
                )
                stamp = event_stamp_ns(message)
                images.setdefault(stamp, {})[f"{match['agent']}/{match['view']}"] = _rgb(pixels)
    except BagError:
        raise
    except Exception as error:  # rosbags raises several unrelated types for unreadable bags
        raise BagError(f"{bag}: cannot read bag: {error}") from error
    starts = [i for i, e in enumerate(events) if e.kind == EventKind.STARTED]
    if not starts:
        raise BagError(f"{bag}: episode {episode_id!r} never started in this run")
    events = events[starts[-1] :]
    record = json.loads(events[0].episode_json) if events[0].episode_json else {}
    target = record.get("target")
    budget = int(record.get("action_budget", 0))
    first = event_stamp_ns(events[0])
    last = event_stamp_ns(events[-1])
    stamps = sorted(s for s in images if first <= s <= last)
    # A set may lack a view (the recorder decimates each topic on its own count): it shows
    # that view's latest picture, or black before the first, so every frame has every view.
    labels = list(dict.fromkeys(label for s in stamps for label in images[s]))
    latest = {
        label: np.zeros_like(next(images[s][label] for s in stamps if label in images[s]))
        for label in labels
    }
    frames = []
    for stamp in stamps:
        latest.update(images[stamp])
        current = [e for e in events if event_stamp_ns(e) <= stamp][-1]
        kind = EventKind(current.kind)
        distance = math.dist(event_position(current), target) if target else math.nan
        ending = "" if kind in (EventKind.STARTED, EventKind.STEP) else kind.name.lower()
        hud = HudState(int(current.step), budget, current.action or "-", distance, ending)
        frames.append(Frame(stamp, dict(latest), hud))
    if not frames:
        raise BagError(
            f"{bag}: episode {episode_id!r} has no recorded camera view (the evaluator's "
            "record_image_views and image_decimation choose them)"
        )
    return frames


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


def render_frame(frame: Frame, episode_id: str) -> np.ndarray:
    """The frame's views side by side (scaled to one height) over the HUD band."""
    height = max(view.shape[0] for view in frame.views.values())
    tiles = []
    for label, view in frame.views.items():
        picture = Image.fromarray(view)
        if picture.height != height:
            width = round(picture.width * height / picture.height)
            picture = picture.resize((width, height))
        ImageDraw.Draw(picture).text((4, 2), label, fill=(255, 255, 255), font=_font(12))
        tiles.append(np.asarray(picture))
    body = np.concatenate(tiles, axis=1)
    hud = frame.hud
    budget = f"/{hud.budget}" if hud.budget else ""
    distance = "n/a" if math.isnan(hud.distance_m) else f"{hud.distance_m:.1f} m"
    text = f"step {hud.step}{budget}   action {hud.action}   to target {distance}"
    if hud.ending:
        text += f"   [{hud.ending}]"
    # Small views get a canvas wide enough for the HUD line.
    needed = round(ImageDraw.Draw(Image.new("RGB", (1, 1))).textlength(text, font=_font(14))) + 12
    width = max(body.shape[1], needed)
    canvas = Image.new("RGB", (width, body.shape[0] + HUD_PIXELS), HUD_BACKGROUND)
    canvas.paste(Image.fromarray(body), (0, 0))
    draw = ImageDraw.Draw(canvas)
    draw.text((6, body.shape[0] + 4), text, fill=(255, 255, 255), font=_font(14))
    draw.text((6, body.shape[0] + 24), episode_id, fill=(170, 170, 170), font=_font(11))
    return np.asarray(canvas)


def write_video(
    frames: Sequence[Frame], episode_id: str, out: Path, fps: float = DEFAULT_FPS
) -> int:
    """Encode ``frames`` as H.264 into ``out`` (MP4); returns the frames written.

    Raises:
        BagError: no frames.
    """
    if not frames:
        raise BagError(f"episode {episode_id!r}: no frames to write")
    pictures = [render_frame(frame, episode_id) for frame in frames]
    # One size for the stream: the largest frame (a longer HUD line widens a frame), even.
    height = -(-max(p.shape[0] for p in pictures) // 2) * 2
    width = -(-max(p.shape[1] for p in pictures) // 2) * 2
    out.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(out), mode="w") as container:
        stream = container.add_stream("libx264", rate=Fraction(fps).limit_denominator(1000))
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for picture in pictures:
            padded = np.full((height, width, 3), HUD_BACKGROUND, dtype=np.uint8)
            padded[: picture.shape[0], : picture.shape[1]] = picture
            video_frame = av.VideoFrame.from_ndarray(padded, format="rgb24")
            for packet in stream.encode(video_frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return len(pictures)


def run_bag(run: Path) -> Path:
    """The bag of a run directory (or ``run`` itself if it is a bag)."""
    return run / "bag" if (run / "bag").is_dir() else run
