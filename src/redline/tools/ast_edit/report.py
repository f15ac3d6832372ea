"""How a report reads: the model-facing preview, the CLI's text and its JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from redline.tools.ast_edit.results import AstEditReport, FileResult, Match, plural

if TYPE_CHECKING:
    from redline.workspace.preview import FileModify

# The CLI imports this module to print a search: what only a rewrite or the model's
# preview needs (diffs, pydantic through redline.tools.base) is imported where used.

NO_REPLACEMENTS = "No replacements made"
_SHOWN = 100


def applied_text(report: AstEditReport) -> str:
    return (
        f"Applied {plural(report.total_matches, 'replacement')} in "
        f"{plural(report.file_count, 'file')}."
    )


def _one_line(text: str) -> str:
    first = text.splitlines()[0] if text else ""
    more = first != text
    if len(first) > _SHOWN:
        first, more = first[:_SHOWN], True
    return first + (" …" if more else "")


def _change(result: FileResult) -> FileModify:
    from redline.workspace.preview import FileModify

    return FileModify(
        result.path, result.sha256, result.old_text or "", result.new_text or "", result.encoding
    )


def file_diff(result: FileResult) -> str:
    from redline.workspace.preview import Preview

    return Preview([_change(result)]).file_diff(_change(result))


def _problems(report: AstEditReport) -> list[str]:
    lines: list[str] = []
    left_out = [r for r in report.errors if r.error_kind in ("overlap", "rewrite")]
    unreadable = [r for r in report.errors if r.error_kind not in ("overlap", "rewrite")]
    kept_back = [(r.path, note) for r in report.files for note in r.skipped]
    if kept_back:
        lines.append("Matches left unchanged:")
        lines.extend(f"  {path}: {note}" for path, note in kept_back)
    if left_out:
        lines.append("Left out of the change:")
        lines.extend(f"  {r.path}: {r.error}" for r in left_out)
    if unreadable:
        lines.append("Not searched (cannot be parsed or read):")
        lines.extend(f"  {r.path}: {r.error}" for r in unreadable)
    if report.limit_reached and report.limit is not None:
        lines.append(
            f"Limit of {plural(report.limit, 'replacement' if report.rewrite else 'match')} "
            "reached: later matches were not included."
        )
    return lines


def _match_line(match: Match) -> str:
    line = f"  line {match.start_line}: {_one_line(match.text)}"
    if match.replacement is not None:
        line += f"  ->  {_one_line(match.replacement)}"
    return line


def preview_text(report: AstEditReport, action_id: str | None) -> str:
    """The tool's result text: banner, summary, per file its matches and diff."""
    from redline.tools.base import PREVIEW_BANNER

    problems = _problems(report)
    if not report.files:
        return "\n".join([NO_REPLACEMENTS, *(["", *problems] if problems else [])])
    parts = [
        PREVIEW_BANNER,
        f"{report.summary_label()} (pending action {action_id}; "
        f"{plural(report.files_searched, 'file')} searched).",
    ]
    for result in report.files:
        parts.append("")
        parts.append(f"{result.path}: {plural(len(result.matches), 'replacement')}")
        parts.extend(_match_line(match) for match in result.matches)
        parts.append(file_diff(result).rstrip("\n"))
    if problems:
        parts.append("")
        parts.extend(problems)
    return "\n".join(parts)


def _position(line: int, column: int) -> dict[str, int]:
    return {"line": line, "column": column}


def to_json(report: AstEditReport) -> dict[str, Any]:
    """The CLI's ``--json`` object (paths as the report holds them)."""
    files: list[dict[str, Any]] = []
    for result in report.files:
        matches: list[dict[str, Any]] = []
        for match in result.matches:
            entry: dict[str, Any] = {
                "start": _position(match.start_line, match.start_column),
                "end": _position(match.end_line, match.end_column),
                "text": match.text,
            }
            if report.rewrite:
                entry["replacement"] = match.replacement
            matches.append(entry)
        item: dict[str, Any] = {"path": result.path, "matches": matches}
        if report.rewrite:
            item["diff"] = file_diff(result)
            if result.skipped:
                item["left_unchanged"] = list(result.skipped)
        files.append(item)
    return {
        "files": files,
        "total_matches": report.total_matches,
        "files_searched": report.files_searched,
        "errors": [{"path": r.path, "message": r.error or ""} for r in report.errors],
    }


def _nested(value: object, level: int) -> str:
    """``value`` as ``json.dumps(..., indent=2)`` writes it ``level`` spaces deep (JSON
    strings hold no raw line break, so every line break is the layout's)."""
    import json

    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + " " * level)


# One match at the depth of the ``--json`` object's matches (each ``%d``/``%s`` filled
# as json.dumps fills them: an int's repr, an encoded string).
_MATCH = (
    '        {\n          "start": {\n            "line": %d,\n            "column": %d\n'
    '          },\n          "end": {\n            "line": %d,\n            "column": %d\n'
    '          },\n          "text": %s'
)


def json_text(report: AstEditReport) -> str:
    """``json_dumps(to_json(report), indent=2)``, the CLI's ``--json`` output, written
    directly: the same characters (tests compare the two on real files) for a tenth of
    the time -- the standard encoder, asked to indent, walks every match's five objects
    in Python (about 45 ms for 2,533 matches, a fifth of what a search of them costs)."""
    from json.encoder import encode_basestring

    from redline.workspace.names import shown

    rewrite = report.rewrite
    files: list[str] = []
    for result in report.files:
        parts = ['    {\n      "path": ', encode_basestring(result.path), ',\n      "matches": ']
        if result.matches:
            entries: list[str] = []
            for m in result.matches:
                entry = _MATCH % (
                    m.start_line,
                    m.start_column,
                    m.end_line,
                    m.end_column,
                    encode_basestring(m.text),
                )
                if rewrite:
                    replacement = m.replacement
                    entry += ',\n          "replacement": ' + (
                        "null" if replacement is None else encode_basestring(replacement)
                    )
                entries.append(entry + "\n        }")
            parts.append("[\n" + ",\n".join(entries) + "\n      ]")
        else:
            parts.append("[]")
        if rewrite:
            parts.append(',\n      "diff": ' + encode_basestring(file_diff(result)))
            if result.skipped:
                parts.append(',\n      "left_unchanged": ' + _nested(list(result.skipped), 6))
        parts.append("\n    }")
        files.append("".join(parts))
    errors = [{"path": r.path, "message": r.error or ""} for r in report.errors]
    text = (
        '{\n  "files": '
        + ("[\n" + ",\n".join(files) + "\n  ]" if files else "[]")
        + f',\n  "total_matches": {int(report.total_matches)!r}'
        + f',\n  "files_searched": {int(report.files_searched)!r}'
        + ',\n  "errors": '
        + _nested(errors, 2)
        + "\n}"
    )
    return shown(text)


def cli_file_text(result: FileResult, rewrite: bool) -> str:
    """One file's part of the CLI output: its diff (as a terminal shows it: a CRLF file
    said once, ``redline.termtext``), or one line per match."""
    if rewrite:
        from redline.workspace.preview import Preview, display_diff

        return display_diff(Preview([_change(result)]))[0].rstrip("\n")
    return "\n".join(
        f"{result.path}:{m.start_line}:{m.start_column + 1}: {_one_line(m.text)}"
        for m in result.matches
    )


def cli_summary(report: AstEditReport) -> str:
    """The CLI's last line: counts, and the limit when it cut the search short."""
    if report.rewrite:
        summary = (
            f"{plural(report.total_matches, 'replacement')} in "
            f"{plural(report.file_count, 'file')} "
            f"({plural(report.files_searched, 'file')} searched)"
        )
    else:
        summary = (
            f"{plural(report.total_matches, 'match')} in "
            f"{plural(report.file_count, 'file')} "
            f"({plural(report.files_searched, 'file')} searched)"
        )
    if report.limit_reached and report.limit is not None:
        summary += f"; stopped at the limit of {report.limit}"
    return summary


def cli_text(report: AstEditReport) -> str:
    """The whole CLI output for a finished report."""
    parts = [cli_file_text(result, report.rewrite) for result in report.files]
    parts.append(cli_summary(report))
    return "\n".join(parts)
