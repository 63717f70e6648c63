"""Fixtures of the sources' tests: a real S3-compatible server."""
from __future__ import annotations

import pytest


@pytest.fixture
def s3_server():
    """A real S3-compatible server on localhost (moto's server mode), for the duration
    of a test: (endpoint URL, fsspec storage options)."""
    server_mod = pytest.importorskip("moto.server", reason="moto[server] is a test "
                                                           "dependency (the [test] extra)")
    pytest.importorskip("s3fs", reason="s3fs is a test dependency (the [test] extra)")
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    try:
        server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
    except Exception as e:  # noqa: BLE001 - the environment, not the code under test
        pytest.skip(f"the S3 server (moto) could not start on 127.0.0.1: {e}")
    endpoint = f"http://127.0.0.1:{port}"
    # not us-east-1: s3fs names the region when it makes a bucket, which S3 refuses there
    options = {"key": "testing", "secret": "testing",
               "client_kwargs": {"endpoint_url": endpoint, "region_name": "eu-west-1"}}
    try:
        yield endpoint, options
    finally:
        server.stop()
