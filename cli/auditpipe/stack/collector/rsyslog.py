"""The collector: our own rsyslogd (imfile in inotify mode -> omkafka), separate from any system one.

imfile follows a file through rename-rotation (the Percona plugin renames audit.log to
audit.log.01 and opens a new audit.log) and reads what is still written to the renamed file; its
read positions persist in the work directory. What it cannot read after being down (files rotated
meanwhile, lines its queue lost when killed) the catch-up ships at every start
(cli/auditpipe/stack/collector/catchup.py); a restart may re-send up to persistStateInterval lines, which the
store and the stats absorb by event id. What it never reads while it runs (a file renamed away
before it opened it, lines written to a rotated file after it closed it) the supervisor's rotation
watch ships (``rotation_watch``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from string import Template

from auditpipe import formats, paths, prereqs, progress
from auditpipe.config import FROM_HOST
from auditpipe.errors import ComponentError, UserError
from auditpipe.process import wait_until
from auditpipe.stack import limits
from auditpipe.stack.collector import catchup
from auditpipe.stack.components.base import Component, StatusRow
from auditpipe.stack.kafka import topics

OMKAFKA_PATHS = [Path("/usr/lib/x86_64-linux-gnu/rsyslog/omkafka.so"), Path("/usr/lib/aarch64-linux-gnu/rsyslog/omkafka.so"),
                 Path("/usr/lib/rsyslog/omkafka.so")]


def source_key(server: str, fmt: str, path: str, collector: str = "rsyslog", timezone: str = "UTC") -> str:
    """The Kafka message key of a source (schemas/audit-raw-message.md). The time zone is in it only
    when it is not UTC, so keys of UTC sources stay what they always were (the catch-up finds a
    source's last line by its key)."""
    key = {"v": 1, "server": server, "format": fmt, "source": path, "collector": collector}
    if timezone != "UTC":
        key["timezone"] = timezone
    return json.dumps(key, separators=(",", ":"))


def _key_of(src: dict) -> str:
    return source_key(src["server"], src["format"], src["path"], timezone=src.get("timezone", "UTC"))


def _rsyslog_string(text: str) -> str:
    """``text`` inside a double-quoted rsyslog config string."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def shipped_sources(cfg, quiet: bool = False) -> list[dict]:
    """The sources as the collector ships them: ``format: auto`` replaced by the format detected
    from the file (cli/auditpipe/formats.py), which is said; a file that cannot tell stops here.
    ``quiet`` (the supervisor's rotation watch, every second): nothing said, and a source whose file
    cannot tell is left out (the collector's start has said why)."""
    out = []
    for i, src in enumerate(cfg.collector_sources()):
        if src["format"] == "auto":
            found, how = formats.detect_file(Path(src["path"]))
            if found is None and quiet:
                continue
            if found is None:
                raise UserError(f"sources[{i}].format is auto, but {how}: name its format in {cfg.file} "
                                f"({', '.join(formats.FORMATS)})")
            if not quiet:
                progress.info(f"  collector: {src['path']}: format {found} ({how})")
            src = {**src, "format": found}
        out.append(src)
    return out


def render_config(cfg, work_dir: Path, sources: list[dict] | None = None) -> str:
    raw_topic = topics.topic_name("raw")
    lim = limits.from_config(cfg)
    head = Template((paths.COLLECTORS / "rsyslog" / "auditpipe.conf.tmpl").read_text()).substitute(
        raw_topic=raw_topic, work_dir=work_dir, max_line_bytes=lim.max_line_bytes,
        max_message_bytes=lim.max_line_bytes + 1)
    block = Template((paths.COLLECTORS / "rsyslog" / "source.conf.tmpl").read_text())
    # TLS and SASL (config kafka.security): librdkafka's names, as the CLI's own clients use them
    security = "".join(f', "{_rsyslog_string(f"{k}={v}")}"' for k, v in cfg.kafka_client_for("collector").items()
                       if k != "bootstrap.servers")
    brokers = ", ".join(f'"{b}"' for b in cfg.kafka_bootstrap.split(","))
    action_template = Template((paths.COLLECTORS / "rsyslog" / "kafka-action.conf.tmpl").read_text())

    def kafka_action(queue_size: int) -> str:
        return action_template.substitute(
            brokers=brokers, raw_topic=raw_topic, kafka_max_bytes=lim.raw_message_bytes, security=security,
            producer_kbytes=lim.producer_queue_kbytes, queue_size=queue_size,
            high_watermark=int(queue_size * limits.HIGH_WATERMARK)).rstrip("\n")

    action = kafka_action(limits.FILE_QUEUE_MESSAGES)
    parts = [head]
    for i, src in enumerate(sources if sources is not None else shipped_sources(cfg)):
        key = _key_of(src)
        parts.append(block.substitute(
            index=i, server=src["server"], format=src["format"], path=src["path"], key=_rsyslog_string(key),
            # a list template's constant is unescaped twice: once as a config string, once as a constant
            cut_key_prefix=_rsyslog_string(_rsyslog_string(key[:-1])),
            work_dir=work_dir, max_line_bytes=lim.max_line_bytes, kafka_action=action,
            framing=_imfile_framing(src["format"])))
    listening = cfg.listen_sources()
    if any(not src["listen"].startswith("udp://") for src in listening):
        # LF and octet-counted framing (RFC 6587), TLS per input; an octet-counted frame may be as long
        # as the longest line shipped whole, and one byte more, which tells a longer one apart
        parts.append(f'\nmodule(load="imtcp" maxFrameSize="{lim.max_line_bytes + 1}")\n')
    if any(src["listen"].startswith("udp://") for src in listening):
        parts.append('\nmodule(load="imudp")\n')
    listen_block = Template((paths.COLLECTORS / "rsyslog" / "listen.conf.tmpl").read_text())
    for i, src in enumerate(listening):
        proto, address = src["listen"].split("://", 1)
        host, port = address.rsplit(":", 1)
        placeholder = "AUDITPIPE-SERVER"
        key = source_key(placeholder, src["format"], src["listen"], timezone=src.get("timezone", "UTC"))
        head_of_key = '{"v":1,"server":"' + placeholder + '"'
        assert key.startswith(head_of_key), key
        rest = '"' + key[len(head_of_key):]
        # from-host: the sender's address as the socket gives it, never a name from reverse DNS, which
        # whoever controls the sender's DNS could make any server's
        server = ('property(name="fromhost-ip" format="json")' if src["server"] == FROM_HOST
                  else f'constant(value="{_rsyslog_string(_rsyslog_string(src["server"]))}")')
        parts.append(listen_block.substitute(
            index=i, listen=src["listen"], server=src["server"], format=src["format"], server_property=server,
            key_rest=_rsyslog_string(_rsyslog_string(rest)),
            cut_key_rest=_rsyslog_string(_rsyslog_string(rest[:-1] + ',"cut":{"problem":"')),
            work_dir=work_dir, max_line_bytes=lim.max_line_bytes, kafka_action=kafka_action(lim.listen_queue_messages),
            input_module="imudp" if proto == "udp" else "imtcp", address=host.strip("[]"), port=port,
            input_params=_listen_params(src)))
    return "".join(parts)


def _listen_params(src: dict) -> str:
    """imtcp's TLS parameters for a tls:// source (RFC 5425), or ''. rsyslog's GnuTLS driver: its
    OpenSSL driver (8.2302) lost the messages still buffered when a sender closed the connection right
    after sending them (18 of 40 of 400-byte messages, 2026-11-27); the GnuTLS driver took them all."""
    if not src["listen"].startswith("tls://"):
        return ""
    lines = ['  streamDriver.name="gtls"', '  streamDriver.mode="1"',
             f'  streamDriver.certFile="{_rsyslog_string(src["tls_cert"])}"',
             f'  streamDriver.keyFile="{_rsyslog_string(src["tls_key"])}"']
    if "tls_peers" in src:  # mutual TLS, and only the named certificates: x509/name
        peers = ", ".join(f'"{_rsyslog_string(p)}"' for p in src["tls_peers"])
        lines += [f'  streamDriver.caFile="{_rsyslog_string(src["tls_ca"])}"', '  streamDriver.authMode="x509/name"',
                  f'  permittedPeer=[{peers}]']
    elif "tls_ca" in src:  # mutual TLS: a sender's certificate must be signed by this CA
        lines += [f'  streamDriver.caFile="{_rsyslog_string(src["tls_ca"])}"', '  streamDriver.authMode="x509/certvalid"']
    else:
        lines += ['  streamDriver.authMode="anon"']
    return "\n".join(lines) + "\n"


def _imfile_framing(fmt: str) -> str:
    """imfile parameters that frame a multi-line format's records (formats.FRAMING), or ''.

    A record ends with the line its end pattern matches (endmsg.regex): shipped as soon as it is
    written, and without a read timeout, since a record is never cut in two however long the server
    takes to write its last line. The lines are joined with a real LF (escapeLF off), as the parsers
    and the catch-up expect; rsyslog keeps an unfinished record in its state file across restarts
    (prev_msg_segment).
    """
    framing = formats.FRAMING[fmt]
    if not framing.multi_line:
        return ""
    return (f'  # {fmt}: records span several lines; one ends with the line this matches\n'
            f'  endmsg.regex="{_rsyslog_string(framing.end)}"\n  escapeLF="off"\n')


#: librdkafka completes SCRAM with Kafka 4 brokers from this version on (earlier ones append their
#: nonce twice in the client-final message, which Kafka 4 refuses: librdkafka pull request 4895)
SCRAM_LIBRDKAFKA = (2, 6, 1)
CATCH_UP_ATTEMPTS = 5  # tries of a start's catch-up, CATCH_UP_PAUSE_S apart
CATCH_UP_PAUSE_S = 2.0


def librdkafka_version() -> tuple[int, ...] | None:
    """The version of the system's librdkafka, the one rsyslog's omkafka links; None if it cannot be loaded."""
    import ctypes

    try:
        lib = ctypes.CDLL("librdkafka.so.1")
    except OSError:
        return None
    lib.rd_kafka_version_str.restype = ctypes.c_char_p
    try:
        return tuple(int(x) for x in lib.rd_kafka_version_str().decode().split("-")[0].split(".")[:3])
    except ValueError:  # a version string of another form: not judged
        return None


def refuse_scram_it_cannot_do(cfg) -> None:
    """A UserError when the collector's Kafka user has a SCRAM mechanism that this rsyslog's librdkafka
    cannot complete with Kafka 4 (Debian 12's is 2.0.2)."""
    mechanism = cfg.kafka_mechanism("collector")
    if not (mechanism or "").startswith("SCRAM-"):
        return
    version = librdkafka_version()
    if version is not None and version < SCRAM_LIBRDKAFKA:
        key = ("kafka.security.principals.collector.sasl_mechanism"
               if "sasl_mechanism" in cfg.kafka["security"].get("principals", {}).get("collector", {})
               else "kafka.security.sasl_mechanism")
        raise UserError(f"{key}: {mechanism} does not work with the local collector: rsyslog's Kafka output uses "
                        f"librdkafka {'.'.join(map(str, version))}, whose SCRAM Kafka 4 brokers refuse (fixed in "
                        f"librdkafka {'.'.join(map(str, SCRAM_LIBRDKAFKA))}); give the collector's user PLAIN "
                        f"({cfg.file})")


class RsyslogCollector(Component):
    name = "collector"
    # while it is down the sources' logs rotate on: a file rotated out of the kept ones before the
    # catch-up reads it is lost (catchup.py), so it comes back within seconds however often it died
    longest_restart_wait = 4.0

    def install(self) -> None:
        packages = ["rsyslog", "rsyslog-kafka"]
        have = shutil.which("rsyslogd") and any(p.exists() for p in OMKAFKA_PATHS)
        if any(s["listen"].startswith("tls://") for s in self.cfg.listen_sources()):
            packages.append("rsyslog-gnutls")  # the TLS stream driver of a tls:// listen source
            have = have and any((p.parent / "lmnsd_gtls.so").exists() for p in OMKAFKA_PATHS)
        if have:
            return
        if not prereqs.is_root() or not shutil.which("apt-get"):
            raise UserError("the collector needs rsyslog with its Kafka output: "
                            f"sudo apt-get install {' '.join(packages)}")
        log = self.cfg.tools_dir / "install.log"
        env = {"DEBIAN_FRONTEND": "noninteractive"}
        with progress.step(f"install {', '.join(packages)} (Debian packages)"):
            progress.run_logged(["apt-get", "update", "-qq"], log, "apt-get update", env=env)
            progress.run_logged(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages], log,
                                "installing rsyslog", env=env)

    @property
    def conf_file(self) -> Path:
        return self.home / "rsyslog.conf"

    def start(self) -> None:
        refuse_scram_it_cannot_do(self.cfg)
        work = self.home / "work"
        work.mkdir(exist_ok=True)
        for src in self.cfg.collector_sources():
            Path(src["path"]).parent.mkdir(parents=True, exist_ok=True)
        sources = shipped_sources(self.cfg)
        text = render_config(self.cfg, work, sources)
        if self.proc.running():
            if self.conf_file.exists() and self.conf_file.read_text() == text:
                return
            progress.info("  collector: sources changed, restarting rsyslogd")
            self.proc.stop()
        self.conf_file.touch(mode=0o600)  # may hold the Kafka password
        self.conf_file.chmod(0o600)
        self.conf_file.write_text(text)
        raw_topic = topics.topic_name("raw")
        try:
            before = catchup.before_start(self.cfg.kafka_client_for("collector"), raw_topic, sources, _key_of, work)
        except Exception as e:  # noqa: BLE001
            raise ComponentError(f"the collector starts once Kafka answers: it first looks up the last line shipped "
                                 f"for each source, to catch up on what was rotated while it was down ({e})") from None
        catchup.remember_start(self.resume_file, before, catching_up=True)
        # rsyslogd refuses to start while its pid file exists ("pidfile ... already exist"); after a
        # kill -9 the file outlives the process. We know it is not running: the file is stale.
        (self.home / "rsyslogd.pid").unlink(missing_ok=True)
        check = subprocess.run(["rsyslogd", "-N1", "-f", str(self.conf_file)], capture_output=True, text=True)
        if check.returncode != 0:
            raise ComponentError(f"rsyslog rejected {self.conf_file}:\n{check.stdout}{check.stderr}")
        self.proc.start(["rsyslogd", "-n", "-f", str(self.conf_file), "-i", str(self.home / "rsyslogd.pid")])
        # rsyslogd -n writes its pid file once its configuration is loaded; it exits at once on errors
        wait_until(lambda: (self.home / "rsyslogd.pid").exists(), 15, "waiting for rsyslogd to start", self.proc,
                   interval=0.1)
        lim = limits.from_config(self.cfg)
        shipped_to: dict = {}
        try:
            reports = self._catch_up(raw_topic, sources, before, lim, shipped_to)
        finally:  # also when it failed: the rotation watch must not wait for ever
            catchup.remember_start(self.resume_file, before, catching_up=False, shipped_to=shipped_to)
        for report in reports:
            if report.summary():
                progress.info(f"  collector: {report.summary()}")
            if report.gap:
                self.record_gap(report)

    def _catch_up(self, raw_topic: str, sources: list[dict], before: dict, lim, shipped_to: dict,
                  attempts: int = CATCH_UP_ATTEMPTS) -> list:
        """The catch-up, tried again while it fails (Kafka slow to answer): rsyslog already runs and ships
        newer lines, so a later start could no longer tell what this one had to ship; ``before`` still
        can, as long as the files are there. A catch-up that fails every time is a recorded gap."""
        for attempt in range(1, attempts + 1):
            try:
                return catchup.catch_up(self.cfg.kafka_client_for("collector"), raw_topic, sources, _key_of, before,
                                        lim.max_line_bytes, lim.raw_message_bytes, shipped_to)
            except Exception as e:  # noqa: BLE001 - tried again, then recorded and raised
                if attempt == attempts:
                    for s in sources:
                        if s["path"] not in shipped_to and before[s["path"]].last is not None:
                            self.record_gap(catchup.CatchUpReport(s["path"], gap=(
                                f"the catch-up failed {attempts} times ({str(e).splitlines()[0][:300]}): lines of "
                                "files rotated while the collector was down may not be shipped")))
                    raise
                progress.info(f"  collector: the catch-up failed ({e}); trying again ({attempt + 1} of {attempts})")
                time.sleep(CATCH_UP_PAUSE_S)
        return []

    def rotation_watch(self) -> catchup.RotationWatch:
        """What ships, while rsyslog runs, the rotated files and late lines it will never read (the
        supervisor looks every ``ROTATION_WATCH_EVERY`` seconds; catchup.unread_rotated)."""
        lim = limits.from_config(self.cfg)
        return catchup.RotationWatch(self.cfg.kafka_client_for("collector"), topics.topic_name("raw"), _key_of,
                                     self.home / "work", self.home / "rotations-shipped.json", self.resume_file,
                                     lim.max_line_bytes, lim.raw_message_bytes)

    @property
    def resume_file(self) -> Path:
        return self.home / "resume-points.json"

    @property
    def gaps_file(self) -> Path:
        return gaps_file(self.cfg)

    def record_gap(self, report) -> None:
        """A gap the collector could not close is never silent: it is kept here and shown by status."""
        self.gaps_file.parent.mkdir(parents=True, exist_ok=True)
        with open(self.gaps_file, "a") as f:
            f.write(json.dumps({"at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "source": report.source,
                                "gap": report.gap}) + "\n")

    def healthy(self) -> bool:
        return self.proc.running()

    def status(self) -> StatusRow:
        pid = self.proc.pid()
        sources = self.cfg.collector_sources()
        from auditpipe.stack.collector.fleet import LISTED

        names = [s["server"] for s in sources]
        more = f" and {len(names) - LISTED} more" if len(names) > LISTED else ""  # a fleet: one line, not fifty
        detail = f"rsyslog, {len(sources)} source(s): " + ", ".join(names[:LISTED]) + more
        listening = self.cfg.listen_sources()
        if listening:
            detail += "; receiving syslog on " + ", ".join(f"{s['listen']} ({s['server']})" for s in listening)
        try:
            gaps = len(self.gaps_file.read_text().splitlines())
        except OSError:
            gaps = 0
        if gaps:
            detail += f"; {gaps} GAP(S) the collector could not close, see {self.gaps_file}"
        return StatusRow(self.name, pid, f"-> {self.cfg.kafka_bootstrap}", "ok" if pid else "stopped", detail)


def gaps_file(cfg) -> Path:
    """Where the collector keeps the gaps it could not close, one JSON object a line (at, source, gap)."""
    return cfg.state_dir / "logs" / "collector-gaps.log"


def recorded_gaps(cfg) -> dict[str, list[dict]]:
    """The gaps the collector recorded (gaps_file), by the server whose log they are of (the configured
    source whose path the recorded source begins with); none when the file is not there (a deployment's
    collector keeps its own)."""
    try:
        lines = gaps_file(cfg).read_text().splitlines()
    except OSError:
        return {}
    paths = sorted(((str(s["path"]), s["server"]) for s in cfg.collector_sources() if s.get("path")),
                   key=lambda p: -len(p[0]))
    out: dict[str, list[dict]] = {}
    for line in lines:
        try:
            gap = json.loads(line)
        except ValueError:
            continue
        server = next((name for path, name in paths if str(gap.get("source", "")).startswith(path)), None)
        if server is not None:
            out.setdefault(server, []).append(gap)
    return out
