"""The local Flink REST API: HTTPS on 127.0.0.1 that answers only the holder of the stack's client key.

Flink's REST API has no users: whoever reaches it can cancel the job (``web.cancel.enable`` only
hides the web UI's button; the REST call still works) and, on a session cluster, upload and run a
jar as the stack, whose job properties hold the store's and Kafka's credentials. Loopback alone
lets every local user in. So the local stack turns on Flink's mutual TLS for REST
(``security.ssl.rest.enabled`` and ``security.ssl.rest.authentication-enabled``): one self-signed
certificate for 127.0.0.1, with its key, serves as the server's identity, the only client identity
it trusts, and the client's trust anchor. Key, certificate and keystore live in
``<state>/flink/rest-tls`` (mode 0700, the files 0600), made at the first start; a local user who
cannot read the state directory cannot talk to Flink at all (docs/security.md).

The web UI needs the same client certificate: import ``rest-tls/client.p12`` into the browser
(its password is in ``rest-tls/password``).
"""

from __future__ import annotations

import json
import secrets
import ssl
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

from auditpipe.config import Config

HOST = "127.0.0.1"
KEYSTORE = "rest.p12"  # the key and certificate, for Flink (keystore and truststore)
CLIENT = "client.p12"  # the same, for a browser
CERT = "rest.crt"
KEY = "rest.key"
PASSWORD = "password"


def tls_dir(cfg: Config) -> Path:
    return cfg.state_dir / "flink" / "rest-tls"


def base_url(cfg: Config) -> str:
    return f"https://{HOST}:{cfg.flink['rest_port']}"


def ensure_identity(cfg: Config) -> Path:
    """The key, certificate and keystores, made once; returns their folder."""
    return make_identity(tls_dir(cfg), [HOST])


def make_identity(d: Path, names: list[str], common_name: str = "auditpipe local Flink REST") -> Path:
    """A self-signed key and certificate for ``names`` (IP addresses or DNS names) and their keystores in
    ``d`` (0700, files 0600), unless they are there; returns ``d``."""
    if all((d / name).exists() for name in (KEYSTORE, CLIENT, CERT, KEY, PASSWORD)):
        return d
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import NameOID

    d.mkdir(parents=True, exist_ok=True)
    d.chmod(0o700)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])

    def alt(n: str):
        try:
            return x509.IPAddress(ipaddress.ip_address(n))
        except ValueError:
            return x509.DNSName(n)
    now = datetime.now(timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=3650))
            .add_extension(x509.SubjectAlternativeName([alt(n) for n in names]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(key, hashes.SHA256()))
    password = secrets.token_urlsafe(24)
    store = pkcs12.serialize_key_and_certificates(b"rest", key, cert, None,
                                                  serialization.BestAvailableEncryption(password.encode()))
    files = {
        PASSWORD: password.encode(),
        KEY: key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                               serialization.NoEncryption()),
        CERT: cert.public_bytes(serialization.Encoding.PEM),
        KEYSTORE: store,
        CLIENT: store,
    }
    for file, data in files.items():
        p = d / file
        p.touch(mode=0o600)
        p.chmod(0o600)
        p.write_bytes(data)
    return d


def flink_settings(cfg: Config) -> dict[str, str]:
    """Flink's settings for REST over mutual TLS (the MiniCluster's ``flink.*`` options, the cluster's config.yaml)."""
    d = ensure_identity(cfg)
    return ssl_settings(str(d / KEYSTORE), (d / PASSWORD).read_text(), internal=False)


def ssl_settings(keystore: str, password: str, internal: bool) -> dict[str, str]:
    """Flink's settings for REST over mutual TLS with the identity in ``keystore`` (PKCS#12) as the server's,
    the only client it trusts and the client's; with ``internal`` also its internal connections (RPC
    between JobManager and TaskManagers, the BLOB server, the data exchange), which then take no peer
    without that identity (Flink's internal SSL is mutual, the keystore its own truststore)."""
    out = {
        "security.ssl.rest.enabled": "true",
        "security.ssl.rest.authentication-enabled": "true",
        "security.ssl.rest.keystore": keystore,
        "security.ssl.rest.keystore-type": "PKCS12",
        "security.ssl.rest.keystore-password": password,
        "security.ssl.rest.key-password": password,
        "security.ssl.rest.truststore": keystore,
        "security.ssl.rest.truststore-type": "PKCS12",
        "security.ssl.rest.truststore-password": password,
        # Flink's default suite is RSA key exchange, which the key (EC) and Python's TLS refuse
        "security.ssl.algorithms": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    }
    if internal:
        out.update({
            "security.ssl.internal.enabled": "true",
            "security.ssl.internal.keystore": keystore,
            "security.ssl.internal.keystore-type": "PKCS12",
            "security.ssl.internal.keystore-password": password,
            "security.ssl.internal.key-password": password,
            "security.ssl.internal.truststore": keystore,
            "security.ssl.internal.truststore-type": "PKCS12",
            "security.ssl.internal.truststore-password": password,
        })
    return out


def cluster_settings(cfg: Config) -> dict[str, str]:
    """The local cluster's settings (stack/flink/cluster.py): REST and its internal connections
    over mutual TLS with the stack's identity, as the deployment's cluster (stack/deployment.py)."""
    d = ensure_identity(cfg)
    return ssl_settings(str(d / KEYSTORE), (d / PASSWORD).read_text(), internal=True)


def context(cfg: Config, client_certificate: bool = True) -> ssl.SSLContext:
    """A TLS context that trusts the stack's certificate and (by default) presents it as the client's."""
    d = ensure_identity(cfg)
    ctx = ssl.create_default_context(cafile=str(d / CERT))
    if client_certificate:
        ctx.load_cert_chain(str(d / CERT), str(d / KEY))
    return ctx


def call(cfg: Config, path: str, method: str = "GET", body: bytes | None = None,
         content_type: str | None = None, timeout: float = 5):
    """The JSON answer of one REST call; raises OSError (urllib.error.HTTPError for an HTTP error status)."""
    headers = {"Content-Type": content_type} if content_type else {}
    req = urllib.request.Request(base_url(cfg) + path, data=body, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout, context=context(cfg)) as r:
        return json.loads(r.read())


def get(cfg: Config, path: str, timeout: float = 5):
    """GET ``path``'s JSON, or None when Flink does not answer (not started, a bad answer)."""
    try:
        return call(cfg, path, timeout=timeout)
    except (OSError, ValueError):
        return None



def stop_with_savepoint(cfg: Config, job_id: str, directory: Path, timeout: float = 600) -> str:
    """Stops the job with a savepoint in Flink's canonical format (one that any state backend
    restores) under ``directory``, without draining (its windows and timers are kept, not fired);
    returns the savepoint's location. Raises RuntimeError when Flink reports it failed or it takes
    longer than ``timeout``."""
    import time

    body = json.dumps({"targetDirectory": directory.as_uri(), "drain": False, "formatType": "CANONICAL"}).encode()
    trigger = call(cfg, f"/jobs/{job_id}/stop", "POST", body, "application/json", timeout=30)["request-id"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = get(cfg, f"/jobs/{job_id}/savepoints/{trigger}", timeout=10) or {}
        if answer.get("status", {}).get("id") == "COMPLETED":
            operation = answer.get("operation") or {}
            if operation.get("location"):
                return operation["location"]
            cause = operation.get("failure-cause") or {}
            raise RuntimeError(f"Flink could not stop the job with a savepoint: "
                               f"{cause.get('stack-trace', cause.get('class', 'no reason given'))[:2000]}")
        time.sleep(0.5)
    raise RuntimeError(f"the savepoint of job {job_id} took longer than {timeout:.0f} s")
