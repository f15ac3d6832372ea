"""The built-in file tools: read, ls, find, grep look; edit and write only preview."""

from __future__ import annotations

from redline.tools.files.edit import EditParams, EditTool
from redline.tools.files.grep import GrepParams, GrepTool
from redline.tools.files.listing import FindParams, FindTool, LsParams, LsTool
from redline.tools.files.pending import STORE_UNAVAILABLE, RepreviewError
from redline.tools.files.read import ReadParams, ReadTool
from redline.tools.files.write import WriteParams, WriteTool

__all__ = [
    "STORE_UNAVAILABLE",
    "EditParams",
    "EditTool",
    "FindParams",
    "FindTool",
    "GrepParams",
    "GrepTool",
    "LsParams",
    "LsTool",
    "ReadParams",
    "ReadTool",
    "RepreviewError",
    "WriteParams",
    "WriteTool",
]
