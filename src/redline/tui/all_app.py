"""``redline --all``: the dashboard's one screen (the inbox) over every workspace redline
knows on this machine (``review.all_source.AllWorkspacesSource``, docs/inbox.md).

The same :class:`~redline.tui.source_app.SourceApp` the team dashboard is: rows carry a
workspace badge, ``f`` steps through the workspaces (then the sources), the selected
action's diff is read when it is shown, and every decision goes through the action's own
workspace. The top line names the state folder the list of workspaces came from (an MCP
client may start redline with another ``XDG_STATE_HOME``).
"""

from __future__ import annotations

from redline.review.all_source import AllWorkspacesSource
from redline.tui.source_app import SourceApp
from redline.tui.source_messages import LinkChanged, RowsArrived


class AllWorkspacesApp(SourceApp):
    TITLE = "redline — every workspace"

    def __init__(self, source: AllWorkspacesSource | None = None) -> None:
        from redline.workspace.known import known_dir

        self.all_source = source or AllWorkspacesSource()
        try:
            where = f"known in {known_dir()}"
        except OSError:
            where = ""
        super().__init__(self.all_source, label=where)
        self._told: tuple[str, ...] = ()

    # -- the workspaces themselves: how many, which are missing or in conflict -----------
    # Textual calls a handler of every class in the MRO unless the message's default is
    # prevented: these call SourceApp's themselves, so it must not run a second time (on
    # 10,000 rows that second run doubled the work before the first frame).
    def on_rows_arrived(self, message: RowsArrived) -> None:
        message.prevent_default()
        super().on_rows_arrived(message)
        self._tell_workspaces()

    def on_link_changed(self, message: LinkChanged) -> None:
        message.prevent_default()
        super().on_link_changed(message)
        if message.online:
            self._tell_workspaces(force=True)

    def _tell_workspaces(self, *, force: bool = False) -> None:
        """The status line counts the workspaces; the activity log says once which are
        missing or in conflict (their actions are not listed) and why."""
        from textual.content import Content

        from redline.termtext import one_line

        spaces = self.all_source.workspaces()
        missing = [s for s in spaces if s.missing]
        conflict = [s for s in spaces if s.conflict]
        broken = [s for s in spaces if s.problem and not s.missing]
        link = f"● {len(spaces) - len(missing)} workspace(s)"
        if missing:
            link += f", {len(missing)} missing"
        if conflict:
            link += f", {len(conflict)} in conflict"
        status = self.inbox.status_line
        status.link, status.link_bad = link, bool(missing or conflict or broken)
        lines: list[str] = []
        for space in missing:
            lines.append(
                f"Workspace {space.describe()} is missing: its folder is gone; its actions "
                "are not listed (`redline workspaces forget` drops it)."
            )
        for space in conflict:
            lines.append(
                f"Workspace {space.path} shares the id {space.id} with another known path: "
                "its actions are not listed; give one of them its own [queue] workspace_id."
            )
        for space in broken:
            lines.append(f"Workspace {space.describe()}: {space.problem}")
        told = tuple(lines)
        if told == self._told and not force:
            return
        fresh = [line for line in told if line not in self._told]
        self._told = told
        if fresh and self.inbox.is_attached:
            self.inbox.activity.write_lines(
                [Content.styled(f"⚠ {one_line(line)}", "$redline-text-warning") for line in fresh]
            )
