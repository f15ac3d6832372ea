"""``redline mcp``: an MCP server whose edit tools only propose (see docs/mcp.md)."""

from redline.mcp_server.proposals import MAX_CONTENT_BYTES, ProposalError, Proposals

__all__ = ["MAX_CONTENT_BYTES", "ProposalError", "Proposals"]
