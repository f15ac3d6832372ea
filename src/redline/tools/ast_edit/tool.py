"""The ``ast_edit`` tool: structural rewrites previewed as a pending action."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, Field

from redline.review.result import ToolResult
from redline.review.store import PendingAction
from redline.tools.ast_edit.engine import TargetError, search
from redline.tools.ast_edit.metavars import PatternError
from redline.tools.ast_edit.ops import compile_ops
from redline.tools.ast_edit.report import applied_text, preview_text
from redline.tools.ast_edit.results import AstEditReport
from redline.tools.base import Tool, ToolContext
from redline.tools.files.pending import STORE_UNAVAILABLE, RepreviewError, file_action
from redline.workspace.details import AstEditDetails, AstEditError
from redline.workspace.paths import ConfinementError

SOURCE = "ast_edit"


class AstEditOp(BaseModel):
    pat: str = Field(description="Python pattern; $NAME, $$$NAME, $_ and $$$ are metavariables")
    out: str = Field(description="Rewrite template using the pattern's metavariable names")


class AstEditParams(BaseModel):
    ops: list[AstEditOp] = Field(
        description="Operations, all matched against the original files", min_length=1
    )
    path: str = Field(
        default=".", description="File, folder or glob relative to the workspace root"
    )
    glob: str | None = Field(default=None, description="Extra file filter under path")
    limit: int | None = Field(default=None, ge=1, description="Maximum total replacements")


def run_preview(root: Path, params: AstEditParams) -> AstEditReport:
    """Search and rewrite; raises PatternError, TargetError or ConfinementError."""
    from redline.workspace.safe_apply import validate_preview

    report = search(
        root,
        [(op.pat, op.out) for op in params.ops],
        (params.path,),
        params.glob,
        params.limit,
        rewrite=True,
    )
    # A listed file may be a symlink leading outside; refuse now, not at apply time.
    validate_preview(root, report.preview())
    return report


def build_action(root: Path, params: AstEditParams, report: AstEditReport) -> PendingAction:
    """The pending action for a report with replacements."""
    label = report.summary_label()

    def repreview() -> PendingAction:
        try:
            fresh = run_preview(root, params)
        except (PatternError, TargetError, ConfinementError) as exc:
            raise RepreviewError(f"Cannot re-preview {label}: {exc}") from None
        if not fresh.files:
            raise RepreviewError(
                f"Cannot re-preview {label}: the patterns no longer match anything."
            )
        return build_action(root, params, fresh)

    return file_action(
        root,
        report.preview(),
        label=label,
        source_tool_name=SOURCE,
        applied_text=applied_text(report),
        repreview=repreview,
        details=AstEditDetails(
            replacements=report.total_matches,
            files=tuple(result.path for result in report.files),
            errors=tuple(AstEditError(e.path, e.error) for e in report.errors),
            limit_reached=report.limit_reached,
        ),
    )


class AstEditTool(Tool):
    """Structural search-and-replace over Python files; writes only on resolve."""

    name = "ast_edit"
    label = "AST Edit"
    description = (
        "Structural search-and-replace for Python code (ast-grep pattern syntax). Each op "
        "has a pattern `pat` and a rewrite `out`. In patterns $NAME matches one node, "
        "$$$NAME zero or more items (arguments, elements, parameters, statements), $_ and "
        "$$$ match without capturing; whitespace, comments, redundant parentheses and "
        "trailing commas are ignored. Parts the pattern leaves out must be absent. Example: "
        "{'pat': 'print($$$A)', 'out': 'logger.info($$$A)'}. Shows a preview; call resolve "
        "to apply or discard it."
    )
    parameters = AstEditParams
    deferrable = True

    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        assert isinstance(params, AstEditParams)
        try:
            compile_ops([(op.pat, op.out) for op in params.ops])
        except PatternError as exc:
            return ToolResult.error(f"Invalid ast_edit operation: {exc}")
        try:
            report = await asyncio.to_thread(run_preview, ctx.cwd, params)
        except PatternError as exc:
            return ToolResult.error(f"Invalid ast_edit operation: {exc}")
        except (TargetError, ConfinementError) as exc:
            return ToolResult.error(f"Invalid ast_edit path: {exc}")
        if not report.files:
            return ToolResult.text_result(
                preview_text(report, None),
                details={"replacements": 0, "files_searched": report.files_searched},
            )
        if ctx.store is None:
            return ToolResult.error(STORE_UNAVAILABLE)
        action = ctx.store.push(build_action(ctx.cwd, params, report))
        return ToolResult.text_result(
            preview_text(report, action.id),
            details={
                "action_id": action.id,
                "label": action.label,
                "source_tool_name": SOURCE,
                "preview": action.preview.summary() if action.preview else None,
                "replacements": report.total_matches,
                "files_searched": report.files_searched,
            },
        )
