"""The resident hook server: ``redline hook AGENT`` answered by a fork of a warm process.

An agent runs ``redline hook`` as a new process for every tool call, and a new Python
process spends most of its time importing redline before the action is even queued
(issue 49). The server (``redline hook-server``) imports the hook's modules once and
waits on a private Unix socket; each hook call's process (the *client*, which imports
almost nothing: ``client.py``) hands over its stdin, stdout, stderr, working folder,
umask, environment and agent, and the server forks a child that runs the very same
``run_agent`` as the hook would, with those streams. The child sends its exit status
back and the client exits with it. One process per call, as before: the child has its
own pid (the queue's owner), and a client killed by its agent ends its child the way a
killed hook ends (``SIGKILL``, the record left with a dead owner). See docs/agents.md.

Nothing here imports the hook itself: ``commands/hook_server.py`` hands the server the
function to run and the modules to load.
"""
