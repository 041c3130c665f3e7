"""What the running local stack exposes to other local users (docs/security.md): every listener on
loopback, a Flink REST API that answers only the stack's client key and takes no jar, and a state
directory no one else can read."""

from __future__ import annotations

import ipaddress
import re
import ssl
import stat
import subprocess
import urllib.error
import urllib.request

import pytest
from auditpipe.stack import flink_rest

pytestmark = pytest.mark.e2e

PARTS = ("kafka", "store", "flink", "collector")


def listeners(pids: set[int]) -> list[tuple[str, str, int]]:
    """(protocol, address, pid) of every listening TCP socket and bound UDP socket of ``pids``."""
    out = subprocess.run(["ss", "-H", "-l", "-n", "-p", "-t", "-u"], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        fields = line.split()
        for pid in map(int, re.findall(r"pid=(\d+)", line)):
            if pid in pids:
                found.append((fields[0], fields[4], pid))
    return found


def is_loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    if host.startswith("::ffff:"):
        host = host[len("::ffff:"):]
    if "%" in host:
        host = host.split("%", 1)[0]
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def test_every_listener_of_the_stack_is_on_loopback(stack):
    pids = {stack.pid(part) for part in PARTS}
    assert None not in pids, {part: stack.pid(part) for part in PARTS}
    found = listeners(pids)
    assert {pid for _, _, pid in found} >= {stack.pid("kafka"), stack.pid("store"), stack.pid("flink")}, found
    assert [x for x in found if not is_loopback(x[1])] == [], "a listener reachable from beyond this machine"


def test_flink_rest_answers_only_the_stacks_client_key_and_takes_no_jar(stack):
    cfg = stack.cfg
    url = flink_rest.base_url(cfg)
    job = next(j["jid"] for j in flink_rest.call(cfg, "/jobs/overview")["jobs"] if j["state"] == "RUNNING")
    without_key = flink_rest.context(cfg, client_certificate=False)
    for method, path in (("GET", "/jobs/overview"), ("PATCH", f"/jobs/{job}?mode=cancel"), ("POST", "/jars/upload")):
        req = urllib.request.Request(url + path, method=method, data=b"" if method != "GET" else None)
        with pytest.raises((ssl.SSLError, urllib.error.URLError, ConnectionError)):
            urllib.request.urlopen(req, timeout=5, context=without_key).read()
    with pytest.raises(urllib.error.HTTPError) as refused:
        flink_rest.call(cfg, "/jars/upload", "POST", b"", "application/octet-stream")
    assert refused.value.code == 404, "jar upload is off in the MiniCluster (web.submit.enable)"
    assert flink_rest.call(cfg, "/config")["features"]["web-submit"] is False
    assert flink_rest.call(cfg, f"/jobs/{job}")["state"] == "RUNNING", "the cancel without the key did nothing"


def test_the_state_directory_and_its_keys_are_the_stacks_alone(stack):
    state = stack.cfg.state_dir
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    tls = flink_rest.tls_dir(stack.cfg)
    assert stat.S_IMODE(tls.stat().st_mode) == 0o700
    for f in tls.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    props = state / "flink" / "job.properties"
    assert stat.S_IMODE(props.stat().st_mode) == 0o600, "the job's properties hold credentials"
