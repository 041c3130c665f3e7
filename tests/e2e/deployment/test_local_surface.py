"""What the running local stack exposes to other local users (docs/security.md): every listener on
loopback, an import's embedded Flink too, a Flink REST API that answers only the stack's client key
and takes no jar, and a state directory no one else can read."""

from __future__ import annotations

import ipaddress
import json
import re
import ssl
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from auditpipe import paths, process
from auditpipe.stack.flink import flink_rest
from auditpipe.tools.simulate import simulate

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


def _import_jvms(state_dir) -> set[int]:
    """The pids of the import JVMs working in ``state_dir`` (their command line names its import folder)."""
    return {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()
            and "io.auditpipe.flink.ImportJob" in (cmd := process.cmdline(int(p.name)) or "") and str(state_dir) in cmd}


def _rest_of(cfg, port: int) -> dict | None:
    """The REST API's /config on ``port`` with the stack's client key, None where no REST API answers."""
    url = f"https://127.0.0.1:{port}/config"
    try:
        with urllib.request.urlopen(url, timeout=2, context=flink_rest.context(cfg)) as r:
            return json.loads(r.read())
    except (OSError, ValueError):
        return None


def test_an_imports_embedded_flink_listens_on_loopback_only(stack, tmp_path):
    """`auditpipe import` runs Flink in a JVM of its own while it holds the store's credentials: each of
    its listeners (the REST API, the BLOB server) is on loopback, and its REST API is the stack's: mutual
    TLS with the stack's key, no jar upload; read while the import runs."""
    m = simulate(tmp_path / "audit.log", rate=100_000, duration=2, speedup=1000, seed=71, rotate_on_size=1 << 40)
    cmd = [sys.executable, "-m", "auditpipe", "--config", str(stack.cfg_file), "import", str(tmp_path / "audit.log"),
           "--server", "e2e-import-surface"]
    seen: list[tuple[str, str, int]] = []
    rest: dict[int, dict] = {}
    refused_without_key: list[int] = []
    with subprocess.Popen(cmd, cwd=paths.REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as run:
        while run.poll() is None:
            for x in listeners(_import_jvms(stack.cfg.state_dir)):
                if x in seen:
                    continue
                seen.append(x)
                port = int(x[1].rsplit(":", 1)[1])
                if x[0] == "tcp" and (answer := _rest_of(stack.cfg, port)) is not None:
                    rest[port] = answer
                    without_key = flink_rest.context(stack.cfg, client_certificate=False)
                    try:
                        urllib.request.urlopen(f"https://127.0.0.1:{port}/config", timeout=2, context=without_key)
                    except (ssl.SSLError, urllib.error.URLError, ConnectionError):
                        refused_without_key.append(port)
            time.sleep(0.1)
        out, err = run.communicate()
    assert run.returncode == 0, f"{out}\n{err}"
    assert f"imported {m.records:,} events" in out, out
    assert [x for x in seen if not is_loopback(x[1])] == [], "an import's listener reachable from beyond this machine"
    assert len(rest) == 1, f"the import's REST API answered the stack's key while it ran: {seen}"
    assert [a["features"]["web-submit"] for a in rest.values()] == [False], rest
    assert refused_without_key == list(rest), "the import's REST API refuses a client without the stack's key"


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
