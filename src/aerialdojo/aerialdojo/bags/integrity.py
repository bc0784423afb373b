"""What proves a bag is the one its run recorded: a SHA-256 of each of its files, recorded in
the run's ``run_status.json`` when the bag is closed and checked before it is scored again,
and whether a writer still holds it open.

The chunk checksums inside the MCAP file are the recorder's (``bags.recorder``) and are
checked wherever chunks are read (rosbags checks them, ``bags.replay`` salvages around a
chunk that fails).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aerialdojo.documents import RECORD, DocumentError, load_json
from aerialdojo.errors import BagError

#: The first bytes of every MCAP file (MCAP specification, "Magic").
MCAP_MAGIC = b"\x89MCAP0\r\n"
#: Beside a run's bag: the run's record, which holds the bag's digests under ``"bag"``.
STATUS_FILE = "run_status.json"
_HASH_BLOCK = 8 * 2**20


def bag_digests(bag: Path) -> dict[str, dict[str, Any]]:
    """The SHA-256 and size of every file of a bag directory, by file name."""
    digests = {}
    for path in sorted(bag.iterdir()):
        if path.is_file():
            digest = hashlib.sha256()
            with path.open("rb") as stream:
                while block := stream.read(_HASH_BLOCK):
                    digest.update(block)
            digests[path.name] = {"sha256": digest.hexdigest(), "bytes": path.stat().st_size}
    return digests


def recorded_digests(bag: Path) -> Mapping[str, Any] | None:
    """The digests the bag's run recorded (``run_status.json`` beside it), or None where it
    recorded none (an older run, a robot's bag, a sharded worker's bag).

    Raises:
        BagError: the run's record is there but unreadable.
    """
    status = bag.parent / STATUS_FILE
    if not status.is_file():
        return None
    try:
        document = load_json(status, RECORD)
    except DocumentError as error:
        raise BagError(f"{error}: cannot check the bag against its run's record") from None
    recorded = document.get("bag") if isinstance(document, dict) else None
    return recorded if isinstance(recorded, dict) and recorded else None


def check_recorded_digests(bag: Path) -> dict[str, dict[str, Any]] | None:
    """Refuse a bag whose files differ from the digests its run recorded: one flipped bit or
    an edit after the run would otherwise be scored as if the run had done it. Returns the
    bag's digests, or None where its run recorded none (nothing is hashed then).

    Raises:
        BagError: a file differs, is missing, or the record is unreadable.
    """
    recorded = recorded_digests(bag)
    if recorded is None:
        return None
    found = bag_digests(bag)
    for name, digest in sorted(recorded.items()):
        expected = digest.get("sha256") if isinstance(digest, dict) else None
        if name not in found:
            raise BagError(
                f"{bag / name}: missing; its run recorded it ({bag.parent / STATUS_FILE})"
            )
        if found[name]["sha256"] != expected:
            raise BagError(
                f"{bag / name}: its SHA-256 differs from the one its run recorded in "
                f"{bag.parent / STATUS_FILE}: the bag changed after the run (damaged or "
                "edited), so it is not scored"
            )
    return found


def hold_while_recording(mcap_file: Path) -> int:
    """Mark ``mcap_file`` as being recorded for as long as the returned descriptor stays
    open (an exclusive ``flock``; the kernel drops it when the writer dies)."""
    descriptor = os.open(mcap_file, os.O_RDONLY)
    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return descriptor


def being_recorded(mcap_file: Path) -> bool:
    """Whether a live writer holds ``mcap_file`` (``hold_while_recording``)."""
    try:
        descriptor = os.open(mcap_file, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(descriptor)
    return False


def check_mcap_magic(mcap_file: Path) -> None:
    """Refuse a file that is not MCAP at all, before reading it as one.

    Raises:
        BagError: unreadable, or its first bytes are not MCAP's.
    """
    try:
        with mcap_file.open("rb") as stream:
            head = stream.read(len(MCAP_MAGIC))
    except OSError as error:
        raise BagError(f"{mcap_file}: cannot read: {error.strerror or error}") from error
    if head != MCAP_MAGIC:
        raise BagError(f"{mcap_file}: not an MCAP file (it does not begin with MCAP's magic)")
