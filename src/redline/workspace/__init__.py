"""The workspace: the preview model, safe apply, journal and file watching."""
