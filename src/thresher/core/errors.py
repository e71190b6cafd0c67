"""Typed errors. The library raises these; the CLI turns them into one-line messages and exit codes."""


class ThresherError(Exception):
    """Base class of every error thresher raises on purpose."""

    exit_code = 1


class ConfigError(ThresherError):
    """A configuration value, file or flag is invalid (unknown key, wrong type, contradiction)."""


class InputError(ThresherError):
    """The input as a whole cannot be used (no readable input, unknown format)."""


class DatasetError(ThresherError):
    """A written dataset does not match its manifest: missing, truncated or altered shard."""


class WorkDirError(ThresherError):
    """The work directory belongs to another configuration or another running build."""


class TaskError(ThresherError):
    """A task of a build failed on every attempt; finished tasks are kept for a resume."""
