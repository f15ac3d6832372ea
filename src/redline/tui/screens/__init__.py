"""Modal screens: help, confirmation and the workspace trust question."""
