"""What a recorder missed of the topics every observation set publishes once.

Every view, odometry and ground-truth pose of one step carry the step's stamp, and the
episode events name each stamp (``STARTED`` the reset's, each step's event the stamp its
action produced). So whatever reached the recorder, the events say which stamps each of
those topics owed it: a stamp an event named and a topic never delivered is a message lost
on the way (a recorder stalled past the writers' history, a participant that lost its match
while stalled), counted whether or not DDS reported it. ROS-free: messages are read as the
CDR bytes the recorder holds.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

#: Where a message's ``header.stamp`` lies in its CDR bytes, after the 4-byte encapsulation
#: header: at once for messages that begin with a header (Image, Odometry, PoseStamped), or
#: after the sequence length for ``tf2_msgs/TFMessage`` (its first transform's header).
HEADER_FIRST = 4
FIRST_OF_SEQUENCE = 8


def cdr_stamp_ns(cdr: bytes | memoryview, offset: int = HEADER_FIRST) -> int | None:
    """The ``builtin_interfaces/Time`` at ``offset`` of a CDR message in nanoseconds, or None
    where the bytes are too short (an empty transform list)."""
    data = bytes(cdr[: offset + 8])
    if len(data) < offset + 8:
        return None
    order = "<" if data[1] & 1 else ">"  # CDR_LE encapsulation ids are odd
    seconds, nanoseconds = struct.unpack_from(f"{order}iI", data, offset)
    return seconds * 1_000_000_000 + nanoseconds


@dataclass
class StampLedger:
    """Which stamps each per-step topic owed the recorder and which it delivered.

    Attributes:
        owed: topic -> stamps the events named for it.
        delivered: topic -> stamps that arrived on it.
    """

    owed: dict[str, set[int]] = field(default_factory=dict)
    delivered: dict[str, set[int]] = field(default_factory=dict)

    def owe(self, topics: list[str], stamp_ns: int) -> None:
        """The events named ``stamp_ns`` for the observation set that ``topics`` publish."""
        for topic in topics:
            self.owed.setdefault(topic, set()).add(stamp_ns)

    def deliver(self, topic: str, stamp_ns: int | None) -> None:
        """A message of ``topic`` with ``stamp_ns`` arrived."""
        if stamp_ns is not None:
            self.delivered.setdefault(topic, set()).add(stamp_ns)

    def outstanding(self) -> bool:
        """Whether some named stamp may still arrive on some topic: one not delivered yet and
        later than every stamp its topic has delivered. Each topic is published in stamp
        order, so a missing stamp before a delivered one is lost, not late (a recorder that
        stalled past the writers' history): waiting for it would only delay the run's end."""
        return any(self._pending(topic) for topic in self.owed)

    def abandon_pending(self) -> None:
        """Stop owing the stamps that may still arrive: the attempt that named them ended as
        an infrastructure failure, and a bridge or robot that died before publishing them
        lost them, not the recorder. Stamps missing before a delivered one stay lost."""
        for topic in self.owed:
            self.owed[topic] -= self._pending(topic)

    def _pending(self, topic: str) -> set[int]:
        delivered = self.delivered.get(topic, set())
        newest = max(delivered, default=None)
        return {
            stamp
            for stamp in self.owed[topic]
            if stamp not in delivered and (newest is None or stamp > newest)
        }

    def lost(self, *, through_ns: int | None = None) -> dict[str, int]:
        """Per topic, how many named stamps never arrived; only stamps up to ``through_ns``
        when given (a run cut short may have named a set whose messages were never sent).
        Topics that lost nothing are left out."""
        lost = {}
        for topic, stamps in sorted(self.owed.items()):
            missing = stamps - self.delivered.get(topic, set())
            if through_ns is not None:
                missing = {stamp for stamp in missing if stamp <= through_ns}
            if missing:
                lost[topic] = len(missing)
        return lost
