"""Records serialized messages into a rosbag2 directory (MCAP storage, metadata.yaml)."""

from __future__ import annotations

import contextlib
import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rosbags.interfaces import Qos
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.storage_mcap import McapWriter
from rosbags.typesys.store import Typestore

from aerialdojo.bags.integrity import bag_digests, hold_while_recording

#: Where a Chunk record's ``uncompressed_crc`` field lies from the record's start: opcode
#: (1 byte), record length (8), message start and end time (8 + 8), uncompressed size (8)
#: (MCAP specification, "Chunk").
_CHUNK_CRC_OFFSET = 1 + 8 + 8 + 8 + 8


class BagRecorder:
    """Writes CDR messages as they arrive; readable by ``ros2 bag`` and by rosbags alone,
    because every message definition, ours included, is embedded in the MCAP file.

    Every chunk carries the CRC-32 of its content (rosbags' writer leaves the field 0, "not
    computed"), so that a reader finds a flipped bit instead of scoring it; rosbags' reader
    checks it, and so does the salvage of an unclosed bag (``bags.replay``). While the bag
    is open, the recorder holds a lock on its file (``integrity.being_recorded``).

    Attributes:
        messages_written: messages written so far.
        digests: the SHA-256 and size of each file of the bag, once it is closed.
    """

    def __init__(self, path: Path, typestore: Typestore) -> None:
        self.path = path
        self._typestore = typestore
        self._writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._connections: dict[str, object] = {}
        self.messages_written = 0
        self.digests: dict[str, dict[str, Any]] = {}
        storage = self._writer.storage
        self._lock: int | None = None
        if isinstance(storage, McapWriter):
            # Relies on rosbags' MCAP storage writer (``close_chunk``, ``chunk``, ``bio``),
            # pinned in requirements; tests read the CRCs back with the mcap library.
            self._close_chunk_unchecked = storage.close_chunk
            storage.close_chunk = self._close_chunk  # type: ignore[method-assign]
            self._lock = hold_while_recording(storage.path)

    def add_topic(self, topic: str, msgtype: str, qos: Sequence[Qos] = ()) -> None:
        """Declare a topic before writing to it (``msgtype`` like ``sensor_msgs/msg/Image``)."""
        if topic not in self._connections:
            self._connections[topic] = self._writer.add_connection(
                topic, msgtype, typestore=self._typestore, offered_qos_profiles=qos
            )

    def write(self, topic: str, timestamp_ns: int, cdr: bytes | memoryview) -> None:
        """Append one serialized message of a declared topic.

        Raises:
            OSError: the bag's disk is full or failing.
        """
        self._writer.write(self._connections[topic], timestamp_ns, cdr)  # type: ignore[arg-type]
        self.messages_written += 1

    def checkpoint(self) -> None:
        """Put everything written so far into the file, so that a writer killed later loses
        nothing before this point (the evaluator calls it at every episode start and end).

        rosbags' MCAP writer holds the current chunk (up to 1 MiB) in memory until it is full;
        closing it early costs one small chunk. A test kills a writer to hold it.

        Raises:
            OSError: the bag's disk is full or failing.
        """
        storage = self._writer.storage
        if isinstance(storage, McapWriter) and storage.chunk.bio.tell():
            storage.close_chunk()
            storage.bio.flush()

    def _close_chunk(self) -> None:
        """rosbags' ``close_chunk``, then the chunk's CRC written into its record."""
        storage = self._writer.storage
        assert isinstance(storage, McapWriter)
        crc = zlib.crc32(storage.chunk.bio.getbuffer())
        start = storage.bio.tell()
        self._close_chunk_unchecked()
        end = storage.bio.tell()
        storage.bio.seek(start + _CHUNK_CRC_OFFSET)
        storage.bio.write(crc.to_bytes(4, "little"))
        storage.bio.seek(end)

    def close(self) -> None:
        """Finish the file, write metadata.yaml, and take the digests of both.

        Raises:
            OSError: the bag's disk is full or failing.
        """
        try:
            self._writer.close()
        finally:
            self._release()
        self.digests = bag_digests(self.path)

    def abandon(self) -> None:
        """Give the bag up after its disk failed: close its file without writing more (what
        was flushed stays, and is salvaged like a killed writer's bag)."""
        storage = self._writer.storage
        if isinstance(storage, McapWriter):
            # A buffered tail that cannot be flushed is dropped: the file is closed either way.
            with contextlib.suppress(OSError, ValueError):
                storage.bio.close()
        self._release()

    def _release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None
