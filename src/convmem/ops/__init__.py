"""The background process and its instruments: the job worker (``worker``: summaries, retention
sweeps, consolidation) and the Prometheus metrics it shares with the service."""
