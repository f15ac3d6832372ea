"""Under the diff: what the configured checks say about the shown action.

Each check's status sits in the pane's top border, so when every check passed or is still
running the pane takes one row and the diff keeps the rest. Below it: a line with the
reasons when a check was skipped, timed out or failed (or the configuration cannot be
read), then the new findings first and the fixed ones; choosing a finding (Enter or a
click) shows its file in the diff at its line. Hidden when no checks are configured.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from redline.checks import CheckResult, Finding
from redline.termtext import one_line

STATUS_STYLE = {
    "pass": "$redline-text-success",
    "findings": "$text-error",
    "running": "$text-muted",
    "timeout": "$redline-text-warning",
    "error": "$redline-text-warning",
    "skipped": "$text-muted",
}


def badge(results: Sequence[CheckResult]) -> Content:
    """The stack's badge for one action: running / pass / N new / error ("" without)."""
    if not results:
        return Content("")
    statuses = {r.status for r in results}
    if "running" in statuses:
        return Content.styled("checks…", "$text-muted")
    if statuses & {"error", "timeout"}:
        word = "timeout" if statuses & {"timeout"} and not statuses & {"error"} else "error"
        return Content.styled(f"✗ {word}", "bold $redline-text-warning")
    new = sum(len(r.new) for r in results)
    if new:
        return Content.styled(f"✗ {new} new", "bold $text-error")
    if statuses == {"skipped"}:
        return Content.styled("checks skipped", "$text-muted")
    return Content.styled("✓ pass", "bold $redline-text-success")


class ChecksPane(Vertical):
    """The shown action's check results; posts :class:`Jump` when a finding is chosen."""

    DEFAULT_CSS = """
    ChecksPane {
        height: auto;
        max-height: 10;
        border-top: solid $panel;
    }
    ChecksPane > #checks-header { height: auto; display: none; }
    ChecksPane > OptionList { height: auto; max-height: 8; border: none; padding: 0; }
    """

    class Jump(Message):
        """Show ``path`` at ``line`` (``new_side``: the proposal's numbering)."""

        def __init__(self, path: str, line: int | None, new_side: bool) -> None:
            self.path = path
            self.line = line
            self.new_side = new_side
            super().__init__()

    class Changed(Message):
        """Results of ``action_id`` changed (posted from a run's thread)."""

        def __init__(self, action_id: str) -> None:
            self.action_id = action_id
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._targets: list[tuple[Finding, bool]] = []
        self._waiting: tuple[Sequence[CheckResult], str] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="checks-header")
        yield OptionList(id="checks-findings")

    def on_mount(self) -> None:
        if self._waiting is not None:
            self.show(*self._waiting)

    def show(self, results: Sequence[CheckResult], note: str = "") -> None:
        try:
            header = self.query_one("#checks-header", Static)
            findings = self.query_one(OptionList)
        except NoMatches:  # not composed yet: shown once it is
            self._waiting = (results, note)
            return
        self._waiting = None
        statuses: list[str | tuple[str, str]] = [("Checks", "bold")]
        for r in results:
            word = f"{len(r.new)} new" if r.status == "findings" else r.status
            statuses += [" ", (r.name, "bold"), " ", (word, STATUS_STYLE.get(r.status, ""))]
        self.border_title = Content.assemble(*statuses)
        reasons: list[str | tuple[str, str]] = []
        for r in results:
            if r.why:
                reasons += [
                    " " if reasons else "",
                    (r.name, "bold"),
                    " ",
                    (r.status, STATUS_STYLE.get(r.status, "")),
                    (f" ({r.why})", "$text-muted"),
                ]
        if note:
            reasons += ["  " if reasons else "", (note, "$redline-text-warning")]
        header.update(Content.assemble(*reasons))
        header.display = bool(reasons)
        targets: list[tuple[Finding, bool]] = []
        options: list[Option] = []
        for r in results:
            for items, new_side, mark, style in (
                (r.new, True, "+", "$text-error"),
                (r.fixed, False, "✓", "$redline-text-success"),
            ):
                for f in items:
                    where = f"{f.path}:{f.line}" if f.line else (f.path or r.name)
                    options.append(
                        Option(
                            Content.assemble(
                                (f"{mark} ", f"bold {style}"),
                                (where, "$text-secondary"),
                                " ",
                                (f.code, "bold"),
                                " ",
                                one_line(f.message.split("\n")[0]) if f.message else "",
                            )
                        )
                    )
                    targets.append((f, new_side))
        if targets == self._targets and findings.option_count == len(options):
            return  # the same findings: the list (and what is highlighted in it) stays
        highlighted = findings.highlighted
        self._targets = targets
        findings.clear_options()
        findings.add_options(options)
        findings.display = bool(options)
        if highlighted is not None and highlighted < len(options):
            findings.highlighted = highlighted

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if 0 <= event.option_index < len(self._targets):
            finding, new_side = self._targets[event.option_index]
            if finding.path:
                self.post_message(self.Jump(finding.path, finding.line, new_side))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()  # the preview panel's file list listens for its own highlights
