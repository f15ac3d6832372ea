"""Drivers: how an agent reaches the review core (the built-in model runtime, ACP, hooks)."""
