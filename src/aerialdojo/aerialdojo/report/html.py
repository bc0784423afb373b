"""``report.html``: the Markdown report as one self-contained page, every picture embedded
(a browser shows it from a mail attachment or a CI artifact, with no files beside it)."""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from markdown_it import MarkdownIt

REPORT_HTML = "report.html"

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right; }
th { background: #f2f2f2; }
td:first-child, th:first-child { text-align: left; }
blockquote { border-left: 4px solid #e0a000; margin: 1em 0; padding: 0.2em 1em;
             background: #fff8e0; }
img { max-width: 100%; }
img[alt^="map:"] { width: 32%; margin: 0.3%; }
"""

_IMAGE_SOURCE = re.compile(r'<img src="([^"]+)"')


def _embedded(run_dir: Path, match: re.Match[str]) -> str:
    name = html.unescape(match.group(1))
    picture = run_dir / name
    if name.startswith(("data:", "http:", "https:")) or not picture.is_file():
        return match.group(0)
    kind = "png" if picture.suffix.lower() == ".png" else picture.suffix.lower().lstrip(".")
    data = base64.b64encode(picture.read_bytes()).decode("ascii")
    return f'<img src="data:image/{kind};base64,{data}"'


def render_report_html(markdown: str, run_dir: Path, title: str) -> str:
    """``markdown`` (a run's report) as a standalone HTML page, the pictures it names (paths
    relative to ``run_dir``) embedded as data URLs."""
    body = MarkdownIt("commonmark").enable("table").render(markdown)
    body = _IMAGE_SOURCE.sub(lambda match: _embedded(run_dir, match), body)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n"
        f"<body>\n{body}</body>\n</html>\n"
    )
