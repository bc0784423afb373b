"""What an evaluation promises whoever started it: the ``aerialdojo`` command's exit codes
and the config file a run leaves in its directory.

Below both the CLI and sharded evaluation (``scale/``), which end runs alike: a module under
``src/`` never imports ``cli``.
"""

from __future__ import annotations

EXIT_FAILED = 1
EXIT_USAGE = 2
#: The run ended with a report, but some selected episodes were excluded or never started;
#: ``aerialdojo rerun`` runs them.
EXIT_INCOMPLETE = 3
EXIT_INTERRUPTED = 130
#: The effective config of a run, saved in its directory (``aerialdojo rerun`` reads it).
RUN_CONFIG = "config.yaml"
#: The longest run id: a directory name (255 bytes on most file systems) with room for the
#: ``-rerun-N`` of its reruns.
MAX_RUN_ID_BYTES = 200


def run_id_problem(run_id: str) -> str | None:
    """Why ``run_id`` cannot name a run, or None when it can.

    A run id is one directory name under the output directory, never a path: ``a/b`` would
    write into the run ``a``, ``../x`` outside the output directory, ``.`` into the output
    directory itself.
    """
    if not run_id:
        return "is empty; a run id names the run's directory"
    if run_id in (".", ".."):
        return "names an existing directory, not a new one"
    separators = [sep for sep in ("/", "\\") if sep in run_id]
    if separators:
        return f"contains {separators[0]!r}: a run id is one directory name, not a path"
    if any(ord(character) < 0x20 or ord(character) == 0x7F for character in run_id):
        return "contains a control character"
    if len(run_id.encode("utf-8", "surrogatepass")) > MAX_RUN_ID_BYTES:
        return f"is longer than {MAX_RUN_ID_BYTES} bytes"
    return None
