"""Task stand-ins that report on the worker process they run in (importable by pool workers)."""

import os


def worker_state(config, env_name):
    """What a warmed worker holds: whether its corpus stages were handed over (no rebuild), and the
    environment variable `env_name` as the worker sees it."""
    from thresher import stage_cache

    return {
        "pid": os.getpid(),
        "stages_seeded": stage_cache.is_cached(config.dedup),
        "env": os.environ.get(env_name),
    }


def sleep_then_echo(seconds, value):
    import time

    time.sleep(seconds)
    return value


def worker_pid(value):
    return os.getpid(), value
