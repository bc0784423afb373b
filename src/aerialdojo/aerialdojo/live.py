"""The live view of a run: a Foxglove WebSocket server (the official ``foxglove-sdk``) that
serves the graph's topics as they are published, CDR bytes and ``ros2msg`` schemas as a ROS
install's ``foxglove_bridge`` does, so the Foxglove app shows a pip-route run with the layout
in ``config/foxglove/``. ROS-free: ``nodes/live_view.py`` feeds it."""

from __future__ import annotations

import threading

import foxglove
from rosbags.typesys.store import Typestore

#: The WebSocket port unless told otherwise: foxglove_bridge's default, which the Foxglove
#: app offers first.
DEFAULT_PORT = 8765


class LiveServer:
    """A Foxglove WebSocket server on 127.0.0.1 with one channel per forwarded topic.

    Args:
        typestore: knows every message type forwarded (ROS 2 and aerialdojo's), for the
            schemas the app decodes with.
        port: TCP port; 0 picks a free one (``port`` tells which).
    """

    def __init__(self, typestore: Typestore, port: int = DEFAULT_PORT) -> None:
        self._typestore = typestore
        self._context = foxglove.Context()
        self._server = foxglove.start_server(
            name="aerialdojo", host="127.0.0.1", port=port, context=self._context
        )
        self._channels: dict[str, foxglove.Channel] = {}
        self._lock = threading.Lock()

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self._server.port)

    @property
    def url(self) -> str:
        """What to open in the Foxglove app (Open connection, Foxglove WebSocket)."""
        return f"ws://127.0.0.1:{self.port}"

    def knows(self, msgtype: str) -> bool:
        """The schema of ``msgtype`` (``sensor_msgs/msg/Image``) can be served."""
        return msgtype in self._typestore.types

    def advertise(self, topic: str, msgtype: str) -> None:
        """Open the channel of ``topic`` (once), with the full ``ros2msg`` definition."""
        with self._lock:
            if topic in self._channels:
                return
            definition, _ = self._typestore.generate_msgdef(msgtype, ros_version=2)
            schema = foxglove.Schema(name=msgtype, encoding="ros2msg", data=definition.encode())
            self._channels[topic] = foxglove.Channel(
                topic, message_encoding="cdr", schema=schema, context=self._context
            )

    def forward(self, topic: str, cdr: bytes, log_time_ns: int) -> None:
        """Send one serialized message of an advertised topic to the subscribed clients."""
        self._channels[topic].log(cdr, log_time=log_time_ns)

    def close(self) -> None:
        """Stop serving; connected clients are dropped."""
        self._server.stop()
