"""The team dashboard, ``redline --queue URL``: every workspace's pending actions in the
team queue, decided from here and carried out by each workspace's own follower
(docs/team-queue.md). The database is reached only through :mod:`redline.teamqueue`, from
worker threads."""
