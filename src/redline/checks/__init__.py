"""Checks before accept: the project's linters and tests run on a proposal in a scratch
copy of the workspace, and the reviewer sees only what the proposal newly breaks (and
what it fixes). See docs/checks.md.
"""

from redline.checks.config import ChecksConfig, CheckSpec, SkippedCheck, load_checks
from redline.checks.findings import Finding
from redline.checks.results import (
    StoredResults,
    findings_text,
    load_results,
    passed,
    result_json,
    run_for_action,
    summary,
)
from redline.checks.run import Cancelled, CheckResult, check_preview

__all__ = [
    "Cancelled",
    "CheckResult",
    "CheckSpec",
    "ChecksConfig",
    "Finding",
    "SkippedCheck",
    "StoredResults",
    "check_preview",
    "findings_text",
    "load_checks",
    "load_results",
    "passed",
    "result_json",
    "run_for_action",
    "summary",
]
