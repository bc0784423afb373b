"""A rosbags typestore that knows aerialdojo's messages besides the ROS 2 standard ones."""

from __future__ import annotations

from pathlib import Path

from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from aerialdojo.errors import BagError

INTERFACES_PACKAGE = "aerialdojo_interfaces"


def interface_msg_dir() -> Path:
    """Directory of the installed ``aerialdojo_interfaces`` .msg files.

    Raises:
        BagError: the interfaces package is not installed (build the workspace).
    """
    from ament_index_python.packages import (  # noqa: PLC0415 - only writers need it
        PackageNotFoundError,
        get_package_share_directory,
    )

    try:
        return Path(get_package_share_directory(INTERFACES_PACKAGE)) / "msg"
    except PackageNotFoundError as error:
        raise BagError(
            f"{INTERFACES_PACKAGE} is not installed; build the workspace (make test / make eval)"
        ) from error


def aerialdojo_typestore(msg_dir: Path | None = None) -> Typestore:
    """The ROS 2 Jazzy typestore with every ``aerialdojo_interfaces`` message registered.

    Args:
        msg_dir: where the .msg files are; default: the installed interfaces package.
    """
    typestore = get_typestore(Stores.ROS2_JAZZY)
    directory = msg_dir or interface_msg_dir()
    types = {}
    for msg_file in sorted(directory.glob("*.msg")):
        name = f"{INTERFACES_PACKAGE}/msg/{msg_file.stem}"
        types.update(get_types_from_msg(msg_file.read_text(), name))
    if not types:
        raise BagError(f"no .msg files in {directory}")
    typestore.register(types)
    return typestore
