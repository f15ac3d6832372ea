"""The review dashboard: a Textual app over one agent session's pending-action stack.

Import ``RedlineApp`` from ``redline.tui.app``; this package stays import-light so the
pure helpers (diff rows, event formatting) load without building the app.
"""
