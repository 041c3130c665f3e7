"""The end-to-end suite's stack (tests/e2e/conftest.py starts it): its ports, its servers and their
formats, its syslog receivers, and the certificates its TLS tests use."""

from __future__ import annotations

from auditpipe.tools.simulate import STYLES

PORTS = {"kafka": 19092, "controller": 19093, "store": 27117, "flink": 18081}
SERVERS = ["e2e-rotation", "e2e-crash", "e2e-queries", "e2e-long-lines", "e2e-types", "e2e-rejected", "e2e-unwritable",
           "e2e-mariadb", "e2e-xml-old", "e2e-xml-new", "e2e-csv", "e2e-stamped", "e2e-enterprise", "e2e-enterprise-l",
           "e2e-compliance", "e2e-archive", "e2e-report", "e2e-dashboards", "e2e-tiers", "e2e-import-live",
           "e2e-quarter", "e2e-insider", "e2e-appender", "e2e-unopened", "e2e-gaps", "e2e-sessions", "e2e-baselines",
           "e2e-reviews", "e2e-stream", "e2e-cef"]
FORMATS = {"e2e-mariadb": "mariadb-audit", "e2e-xml-old": "percona-xml", "e2e-xml-new": "percona-xml",
           "e2e-csv": "percona-csv", "e2e-enterprise": "mysql-enterprise-json",
           "e2e-enterprise-l": "mysql-enterprise-json"}
# a fleet's forty logs in every style the simulator writes (tests/e2e/collector/test_fleet.py)
FLEET = {f"e2e-fleet-{i:02d}": style for i, style in enumerate(list(STYLES) * 7) if i < 40}
SERVERS += list(FLEET)
FORMATS.update({server: STYLES[style] for server, style in FLEET.items()})
# the collector's syslog receivers (tests/e2e/collector/test_syslog_receiver.py; the fleet's senders: test_fleet.py)
LISTEN_TCP, LISTEN_UDP, LISTEN_TLS = "tcp://127.0.0.1:25514", "udp://127.0.0.1:25515", "tls://127.0.0.1:26514"
# mutual TLS with permitted certificates (x509/name): what a listener other hosts reach must be
LISTEN_MTLS, MTLS_PEER = "tls://127.0.0.1:26515", "sender.e2e.test"
LISTEN_FLEET = "tcp://127.0.0.1:25516"
LISTEN = [{"listen": LISTEN_TCP, "server": "e2e-syslog"}, {"listen": LISTEN_UDP}, {"listen": LISTEN_FLEET}]


def tls_receiver_possible() -> bool:
    """rsyslog's GnuTLS driver is there, or `up` can install it (root with apt-get)."""
    import shutil

    from auditpipe import prereqs
    from auditpipe.stack.collector.rsyslog import OMKAFKA_PATHS

    return any((p.parent / "lmnsd_gtls.so").exists() for p in OMKAFKA_PATHS) or (
        prereqs.is_root() and shutil.which("apt-get") is not None)


def receiver_certificate(folder) -> tuple:
    """A self-signed certificate for 127.0.0.1 and its key (openssl), for the TLS receiver."""
    return certificate(folder, "receiver", "127.0.0.1", "IP:127.0.0.1")


def certificate(folder, name: str, cn: str, san: str, ca: tuple | None = None) -> tuple:
    """A certificate (self-signed, or signed by ``ca``: (cert, key)) and its key, made by openssl."""
    import subprocess

    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / f"{name}.pem", folder / f"{name}.key"
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key)]
    if ca is None:
        subprocess.run(["openssl", "req", "-x509", *ec, "-out", str(cert), "-days", "2", "-subj", f"/CN={cn}",
                        "-addext", f"subjectAltName={san}"], check=True, capture_output=True)
        return cert, key
    request = folder / f"{name}.csr"
    subprocess.run(["openssl", "req", "-new", *ec, "-out", str(request), "-subj", f"/CN={cn}"],
                   check=True, capture_output=True)
    extensions = folder / f"{name}.ext"
    extensions.write_text(f"subjectAltName={san}\nextendedKeyUsage=clientAuth,serverAuth\n")
    subprocess.run(["openssl", "x509", "-req", "-in", str(request), "-CA", str(ca[0]), "-CAkey", str(ca[1]),
                    "-CAcreateserial", "-out", str(cert), "-days", "2", "-extfile", str(extensions)],
                   check=True, capture_output=True)
    return cert, key


def mutual_tls_files(folder) -> dict:
    """A CA, the receiver's certificate it signed, and senders' certificates: the permitted one
    (MTLS_PEER), another the CA signed (a name not permitted) and one with the permitted name that
    the CA did not sign."""
    ca = certificate(folder, "ca", "auditpipe e2e CA", "DNS:ca.e2e.test")
    return {"ca": ca, "receiver": certificate(folder, "mtls-receiver", "127.0.0.1", "IP:127.0.0.1", ca),
            "permitted": certificate(folder, "permitted", MTLS_PEER, f"DNS:{MTLS_PEER}", ca),
            "other": certificate(folder, "other", "intruder.e2e.test", "DNS:intruder.e2e.test", ca),
            "unsigned": certificate(folder, "unsigned", MTLS_PEER, f"DNS:{MTLS_PEER}")}


def send_over_mutual_tls(host: str, port: int, ca, certificate_and_key: tuple, records: list[bytes]) -> str | None:
    """Sends each record as an octet-counted RFC 5424 message over TLS, presenting ``certificate_and_key``
    and trusting ``ca``; what refused it (the handshake's error, the receiver closing the session), or None
    when all was sent and the session stayed open."""
    import socket
    import ssl

    context = ssl.create_default_context(cafile=str(ca))
    context.load_cert_chain(*certificate_and_key)
    try:
        with socket.create_connection((host, int(port)), timeout=30) as raw, \
                context.wrap_socket(raw, server_hostname=host) as tls:
            for r in records:
                msg = b"<134>1 2026-11-27T12:00:00Z db-mtls percona-audit 1088 - - " + r
                tls.sendall(str(len(msg)).encode() + b" " + msg)
            tls.settimeout(5)
            try:  # a receiver closes the session of a peer it does not permit (TLS 1.3: after the handshake)
                return "closed by the receiver" if tls.recv(1) == b"" else None
            except TimeoutError:
                return None
    except (ssl.SSLError, ConnectionError) as e:
        return str(e)
