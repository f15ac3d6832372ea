"""The team queue: a workspace's review queue mirrored to PostgreSQL (docs/team-queue.md).

The local queue (``.redline/queue/``) stays the only thing that may write files. This
package mirrors a workspace's proposals to a shared database, lets any reviewer decide
there (``redline pending apply --queue URL``), and runs the local follower that applies a
decision only when it matches a proposal this workspace made, through
:func:`redline.review.queued.resolve_queued` — the same ``resolve_pending`` every other
decision goes through.

- ``settings``: the queue URL (``--queue`` > ``$REDLINE_QUEUE_URL`` > ``[queue] url``),
  the workspace id, the reviewer's name.
- ``db``: connecting (every error message redacted) and the versioned migrations.
- ``hashes``: the patch and base hashes a decision is checked against.
- ``mirror``: local records → rows; ``remote``: list, show, decide across workspaces.
- ``follower``: ``redline pending follow``.
"""
