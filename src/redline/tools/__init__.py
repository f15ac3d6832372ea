"""Tools the agent can call, and the pending-action machinery they share."""
