"""The rendered rsyslog configuration: our key contract, one input per source, accepted by rsyslogd."""

import json
import re
import shutil
import subprocess

import pytest

from auditpipe import config
from auditpipe.components.collector import render_config, source_key


@pytest.fixture
def cfg(tmp_path):
    f = tmp_path / "auditpipe.yaml"
    f.write_text("sources:\n  - {path: /var/lib/mysql/audit.log, server: db-01}\n")
    return config.load(f)


def test_source_key_follows_the_contract():
    key = json.loads(source_key("db-01", "percona-json", "/a/audit.log"))
    assert key == {"v": 1, "server": "db-01", "format": "percona-json", "source": "/a/audit.log", "collector": "rsyslog"}


def test_one_input_and_action_per_source(cfg, tmp_path):
    text = render_config(cfg, tmp_path / "work")
    assert text.count('type="imfile"') == 2  # the configured source and the demo log
    assert 'file="/var/lib/mysql/audit.log"' in text
    assert 'topic="audit.raw"' in text
    assert '"enable.idempotence=true"' in text and '"acks=all"' in text
    assert 'queue.saveOnShutdown="on"' in text and 'queue.filename=' in text
    keys = [k for k in re.findall(r'key="((?:[^"\\]|\\.)*)"', text) if k.startswith("{")]
    assert json.loads(keys[0].replace('\\"', '"'))["server"] == "db-01"
    assert 'dynaKey="on"' in text and 'key="auditpipe_cut_key_0"' in text, "lines that cannot ship whole: a report"
    assert 'parser.escapeControlCharactersOnReceive="off"' in text


@pytest.mark.skipif(not shutil.which("rsyslogd"), reason="rsyslogd is not installed (./auditpipe setup installs it)")
def test_rsyslogd_accepts_the_rendered_config(cfg, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    conf = tmp_path / "rsyslog.conf"
    conf.write_text(render_config(cfg, work))
    check = subprocess.run(["rsyslogd", "-N1", "-f", str(conf)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
