"""moto's S3 server for tests/engines and bench/engines.py: a process of its own on 127.0.0.1
(a free port), a bucket filled from local directories, and the clients pointed at it."""
import os
import socket
import subprocess
import sys
import time
import urllib.request

KEY, SECRET, REGION = "testing", "testing", "us-east-1"
#: how long the server may take to answer (seconds)
START_TIMEOUT = 20


class S3Server:
    """The server, started on a free loopback port; stop() ends it (the process it started)."""

    def __init__(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.endpoint = "http://127.0.0.1:%d" % port
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                urllib.request.urlopen(self.endpoint + "/moto-api/", timeout=1).read()
                return
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise RuntimeError("moto's S3 server did not answer on %s" % self.endpoint)
                time.sleep(0.1)

    def client(self):
        import boto3
        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=KEY, aws_secret_access_key=SECRET,
                            region_name=REGION)

    def upload(self, bucket, root, subdirs):
        """A bucket holding root/SUB/NAME as SUB/NAME for every SUB of subdirs."""
        c = self.client()
        c.create_bucket(Bucket=bucket)
        for sub in subdirs:
            for name in sorted(os.listdir(os.path.join(root, sub))):
                c.upload_file(os.path.join(root, sub, name), bucket, "%s/%s" % (sub, name))

    def storage_options(self):
        """s3fs's options (fsspec's storage_options)."""
        return {"key": KEY, "secret": SECRET, "client_kwargs": {"endpoint_url": self.endpoint, "region_name": REGION}}

    def arrow(self):
        """pyarrow's S3 filesystem."""
        import pyarrow.fs
        return pyarrow.fs.S3FileSystem(access_key=KEY, secret_key=SECRET, region=REGION, scheme="http",
                                       endpoint_override=self.endpoint.split("://", 1)[1])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
