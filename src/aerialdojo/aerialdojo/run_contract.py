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
