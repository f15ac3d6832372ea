"""The hook gateway: agents run in their own terminal (Claude Code, Codex, Gemini CLI) ask
``redline hook AGENT`` before each tool call; each edit becomes a pending action of the
workspace queue and the hook answers with the reviewer's decision. See docs/agents.md.

No review logic lives here: actions are proposed and decided through
:class:`redline.review.session.ReviewSession`. Modules import only what they need, so the
hook process starts fast (``payload`` and ``answers`` use the standard library alone).
"""
