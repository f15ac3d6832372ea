"""The agent runtime: session loop, events, providers and the session log."""
