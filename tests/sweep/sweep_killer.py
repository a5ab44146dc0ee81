"""Tasks that kill the worker process running them (for the worker-death test)."""
import os
from pathlib import Path


def die_once(marker):
    """Kill the worker the first time (leaving `marker`), succeed when retried."""
    path = Path(marker)
    if not path.exists():
        path.write_text("died once")
        os._exit(1)
    return "survived"


def always_die():
    os._exit(1)


def innocent(x):
    return 2 * x
