"""Records serialized messages into a rosbag2 directory (MCAP storage, metadata.yaml)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rosbags.interfaces import Qos
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.storage_mcap import McapWriter
from rosbags.typesys.store import Typestore


class BagRecorder:
    """Writes CDR messages as they arrive; readable by ``ros2 bag`` and by rosbags alone,
    because every message definition, ours included, is embedded in the MCAP file."""

    def __init__(self, path: Path, typestore: Typestore) -> None:
        self.path = path
        self._typestore = typestore
        self._writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._connections: dict[str, object] = {}
        self.messages_written = 0

    def add_topic(self, topic: str, msgtype: str, qos: Sequence[Qos] = ()) -> None:
        """Declare a topic before writing to it (``msgtype`` like ``sensor_msgs/msg/Image``)."""
        if topic not in self._connections:
            self._connections[topic] = self._writer.add_connection(
                topic, msgtype, typestore=self._typestore, offered_qos_profiles=qos
            )

    def write(self, topic: str, timestamp_ns: int, cdr: bytes | memoryview) -> None:
        """Append one serialized message of a declared topic."""
        self._writer.write(self._connections[topic], timestamp_ns, cdr)  # type: ignore[arg-type]
        self.messages_written += 1

    def checkpoint(self) -> None:
        """Put everything written so far into the file, so that a writer killed later loses
        nothing before this point (the evaluator calls it at every episode end).

        rosbags' MCAP writer holds the current chunk (up to 1 MiB) in memory until it is full;
        closing it early costs one small chunk. Relies on rosbags' MCAP storage writer
        (``close_chunk``, ``bio``), pinned in requirements; a test kills a writer to hold it.
        """
        storage = self._writer.storage
        if isinstance(storage, McapWriter) and storage.chunk.bio.tell():
            storage.close_chunk()
            storage.bio.flush()

    def close(self) -> None:
        """Finish the file and write metadata.yaml."""
        self._writer.close()
