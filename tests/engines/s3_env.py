"""The environment a test's S3 client and thresher's fsspec reads share: dummy credentials and the
loopback endpoint in the standard AWS variables (the moto server a fixture started)."""

from __future__ import annotations

from typing import Any


def s3_client(endpoint: str, monkeypatch: Any) -> Any:
    """A boto3 client of `endpoint`, with the variables set for the test's duration."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    import boto3

    try:
        import s3fs
    except ImportError:
        pass
    else:
        # fsspec keeps one filesystem per constructor arguments, and the endpoint comes from the
        # environment, not the arguments: an instance made for an earlier test's server (stopped since)
        # would be handed back and dial a dead port
        s3fs.S3FileSystem.clear_instance_cache()

    return boto3.client("s3", endpoint_url=endpoint)
