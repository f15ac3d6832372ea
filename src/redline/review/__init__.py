"""The review core: pending actions, how they are proposed and decided, and who follows the queue.

Every driver (the model runtime, ACP, hooks) and every client (the dashboard, ``redline pending``,
MCP, rules) proposes and decides through this package; nothing here imports a driver or Textual.
"""
