"""Prompt templates: plain text files with ``$name`` placeholders (``string.Template``),
shipped under ``prompts/<benchmark>/`` and replaceable by an edited copy. A template is
checked when it is loaded, so a placeholder the code does not fill fails before a run starts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from string import Template

from aerialdojo.errors import ConfigError

SHIPPED = Path(__file__).resolve().parent / "prompts"


def template_names(text: str) -> set[str]:
    """The placeholders of a template text (``string.Template.get_identifiers`` needs 3.11)."""
    names = set()
    for match in Template.pattern.finditer(text):
        name = match.group("named") or match.group("braced")
        if name:
            names.add(name)
    return names


@dataclass(frozen=True)
class PromptSet:
    """The templates of one benchmark, by file stem.

    Attributes:
        directory: where they were read from.
        templates: file stem -> template.
    """

    directory: Path
    templates: dict[str, Template]

    @classmethod
    def load(cls, directory: Path, fields: Mapping[str, frozenset[str]]) -> PromptSet:
        """Read ``<stem>.txt`` for every stem of ``fields`` from ``directory``.

        Args:
            directory: a shipped ``prompts/<benchmark>`` directory or an edited copy.
            fields: file stem -> the placeholders the code fills for it.

        Raises:
            ConfigError: a missing file, or a placeholder the code does not fill (the message
                names the file and lists what it may use).
        """
        templates = {}
        for stem, known in fields.items():
            path = directory / f"{stem}.txt"
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as error:
                raise ConfigError(f"{path}: cannot read prompt template: {error}") from error
            unknown = template_names(text) - known
            if unknown:
                raise ConfigError(
                    f"{path}: unknown placeholder(s) {', '.join(sorted('$' + n for n in unknown))}"
                    f"; this template may use {', '.join(sorted('$' + n for n in known))}"
                )
            templates[stem] = Template(text)
        return cls(directory, templates)

    def render(self, stem: str, values: Mapping[str, object]) -> str:
        """The template ``stem`` filled with ``values`` (every placeholder is known to have one
        when the caller passes the fields it declared)."""
        return self.templates[stem].substitute({k: str(v) for k, v in values.items()}).strip()


def prompt_directory(configured: str, benchmark: str) -> Path:
    """The configured template directory, or the shipped one of ``benchmark``."""
    return Path(configured).expanduser() if configured else SHIPPED / benchmark
