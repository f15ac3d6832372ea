"""Model providers and the ``--model`` string parser."""
