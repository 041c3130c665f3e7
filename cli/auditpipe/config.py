"""The configuration file: loading, validation against schemas/config.schema.json, defaults.

Validation names the bad key (``kafka.prot: unknown key``) and the file. Defaults come from the
schema only, so the schema is the single source of truth for keys, defaults and documentation
(docs/configuration.md is generated from it by ``auditpipe config docs``).
"""

from __future__ import annotations

import copy
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from auditpipe import contract, paths
from auditpipe.errors import UserError

SCHEMA_FILE = paths.SCHEMAS / "config.schema.json"
ENV_CONFIG = "AUDITPIPE_CONFIG"


def load_schema() -> dict:
    return json.loads(SCHEMA_FILE.read_text())


def _apply_defaults(value: Any, schema: dict, root: dict) -> Any:
    if "$ref" in schema:
        ref = schema["$ref"].split("/")[-1]
        merged = dict(root["$defs"][ref])
        merged.update({k: v for k, v in schema.items() if k != "$ref"})
        schema = merged
    if value is None and "default" in schema:
        value = copy.deepcopy(schema["default"])
    if isinstance(value, dict) and "properties" in schema:
        for key, sub in schema["properties"].items():
            filled = _apply_defaults(value.get(key), sub, root)
            if filled is not None:
                value[key] = filled
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        value = [_apply_defaults(v, schema["items"], root) for v in value]
    return value


def _where(error: jsonschema.ValidationError) -> str:
    parts = [str(p) for p in error.absolute_path]
    if error.validator == "additionalProperties":
        unexpected = re.findall(r"'([^']+)' was unexpected", error.message) or re.findall(
            r"'([^']+)'", error.message)
        allowed = sorted(error.schema.get("properties", {}))
        key = ".".join(parts + [unexpected[0]]) if unexpected else ".".join(parts)
        return f"{key}: unknown key (allowed here: {', '.join(allowed)})"
    key = ".".join(parts) or "(top level)"
    return f"{key}: {error.message}"


def validate(raw: Any, origin: str) -> dict:
    """Validates a parsed config document and returns it with every default filled in."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise UserError(f"{origin}: the configuration must be a mapping of keys, not {type(raw).__name__}")
    schema = load_schema()
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(raw), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = "\n".join(f"  - {_where(e)}" for e in errors)
        raise UserError(f"invalid configuration in {origin}:\n{lines}")
    data = _apply_defaults(copy.deepcopy(raw), schema, schema)
    for given, src in zip(raw.get("sources") or [], data.get("sources", [])):
        if isinstance(given, dict) and "listen" in src:  # a receiver's records are told apart one by one
            src.setdefault("server", FROM_HOST)
            if given.get("format", "auto") == "auto":
                src["format"] = "syslog"
    return data


_MONGO_URI = re.compile(r"mongodb(?:\+srv)?://\S+")
# options of a connection string whose values are secrets (a password, a session token, a key's passphrase)
_SECRET_OPTION = re.compile(r"(?i)([?&](?:[^=&\s]*(?:password|secret|token)[^=&\s]*|authMechanismProperties)=)[^&\s]*")


def redact_uri(text: str) -> str:
    """Every MongoDB connection string in ``text`` with its password and secret options as ``***``:
    ``mongodb://user:secret@host/?tlsCertificateKeyFilePassword=x`` -> ``mongodb://user:***@host/?tlsCertificateKeyFilePassword=***``.
    The user information ends at the last '@' (a password may hold an unencoded '@' or '/'): what
    lies before it after the first ':' is the password, whatever it holds."""
    def one(m: re.Match) -> str:
        scheme, rest = m.group().split("://", 1)
        at = rest.rfind("@")
        if at >= 0 and ":" in rest[:at]:
            rest = rest[:at].split(":", 1)[0] + ":***" + rest[at:]
        return scheme + "://" + _SECRET_OPTION.sub(r"\1***", rest)
    return _MONGO_URI.sub(one, text)


# the largest max_line_size: a dead letter keeps the line whole, and must fit a 16 MiB MongoDB
# document (cli/auditpipe/stack/limits.py derives every other limit)
MAX_OF_MAX_LINE = 8 * 1024 * 1024


def size_bytes(text: str) -> int:
    """'512k' / '4m' -> bytes."""
    m = re.fullmatch(r"([0-9]+)([km])", text)
    if not m:
        raise UserError(f"'{text}' is not a size like 512k or 4m")
    return int(m.group(1)) * {"k": 1024, "m": 1024 * 1024}[m.group(2)]


def duration_seconds(text: str) -> float:
    m = re.fullmatch(r"([0-9]+)(ms|s|m|h|d)", text)
    if not m:
        raise UserError(f"'{text}' is not a duration like 500ms, 5s, 10m, 1h or 7d")
    n = int(m.group(1))
    return n * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


@dataclass
class Config:
    """A validated configuration with resolved paths."""

    data: dict
    file: Path
    #: where relative paths are read from when not the file's folder (an installed wheel's defaults)
    home: Path | None = None

    @property
    def base_dir(self) -> Path:
        return self.home or self.file.parent

    def _path(self, value: str) -> Path:
        p = Path(os.path.expanduser(value))
        return p if p.is_absolute() else (self.base_dir / p).resolve()

    @property
    def state_dir(self) -> Path:
        return self._path(self.data["state_dir"])

    def make_state_dir(self) -> Path:
        """The state directory, created (or narrowed to) mode 0700: it holds unmasked audit lines
        (Kafka's segments), the store's file, the Flink REST key, reports and the archive, none of
        them for other local users (docs/security.md)."""
        d = self.state_dir
        d.mkdir(parents=True, exist_ok=True)
        if d.stat().st_mode & 0o077 and d.stat().st_uid == os.getuid():
            d.chmod(0o700)
        return d

    @property
    def tools_dir(self) -> Path:
        return self._path(self.data["tools_dir"])

    @property
    def kafka(self) -> dict:
        return self.data["kafka"]

    @property
    def kafka_is_local(self) -> bool:
        """True: auditpipe runs the broker (the local stack); False: it uses kafka.bootstrap_servers."""
        return "bootstrap_servers" not in self.kafka

    @property
    def kafka_bootstrap(self) -> str:
        return self.kafka.get("bootstrap_servers") or f"{self.kafka['host']}:{self.kafka['port']}"

    def kafka_principal(self, part: str | None = None) -> tuple[str, str, str] | None:
        """(username, the variable holding its password, the config key naming it) of the SASL user
        that ``part`` (a key of kafka.security.principals: collector, job, forwarder) connects as: its own,
        or without one (or for the CLI, part None) the administrator, kafka.security.username."""
        sec = self.kafka["security"]
        own = sec.get("principals", {}).get(part) if part else None
        if own:
            return own["username"], own["password_env"], f"kafka.security.principals.{part}.password_env"
        if "username" not in sec:
            return None
        return sec["username"], sec["password_env"], "kafka.security.password_env"

    def kafka_mechanism(self, part: str | None = None) -> str | None:
        """The SASL mechanism ``part`` connects with: its principal's own, else kafka.security.sasl_mechanism."""
        sec = self.kafka["security"]
        own = sec.get("principals", {}).get(part) if part else None
        return (own or {}).get("sasl_mechanism") or sec.get("sasl_mechanism")

    def kafka_password(self, part: str | None = None) -> str | None:
        principal = self.kafka_principal(part)
        if principal is None:
            return None
        user, env, key = principal
        value = os.environ.get(env)
        if value is None:
            raise UserError(f"{key}: the environment variable {env} (the Kafka password of user {user}) is not set "
                            f"({self.file})")
        return value

    @property
    def kafka_client(self) -> dict:
        """librdkafka settings of the CLI's own Kafka clients (the administrator's, with
        kafka.security.principals): bootstrap servers and security."""
        return self.kafka_client_for(None)

    def kafka_client_for(self, part: str | None) -> dict:
        """librdkafka settings every Kafka client of auditpipe starts from, as ``part`` (collector: the
        catch-up and rsyslog's omkafka; None: the CLI): bootstrap servers and security. Same names in
        librdkafka and rsyslog's confParam."""
        sec = self.kafka["security"]
        out = {"bootstrap.servers": self.kafka_bootstrap, "security.protocol": sec["protocol"].lower()}
        if sec["protocol"].startswith("SASL_"):
            out.update({"sasl.mechanisms": self.kafka_mechanism(part), "sasl.username": self.kafka_principal(part)[0],
                        "sasl.password": self.kafka_password(part)})
        if sec["protocol"].endswith("SSL"):
            for key, prop in (("ca_file", "ssl.ca.location"), ("certificate_file", "ssl.certificate.location"),
                              ("key_file", "ssl.key.location")):
                if key in sec:
                    out[prop] = str(self._path(sec[key]))
        return out

    @property
    def kafka_java_client(self) -> dict:
        """The same for the job's Java Kafka clients (sources, dead-letter and alert sinks, rejection
        producer, lag reporter), as the job's principal."""
        sec = self.kafka["security"]
        out = {"bootstrap.servers": self.kafka_bootstrap, "security.protocol": sec["protocol"]}
        if sec["protocol"].startswith("SASL_"):
            mechanism = self.kafka_mechanism("job")
            module = ("org.apache.kafka.common.security.plain.PlainLoginModule" if mechanism == "PLAIN"
                      else "org.apache.kafka.common.security.scram.ScramLoginModule")
            quote = lambda v: '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'  # noqa: E731
            out.update({"sasl.mechanism": mechanism,
                        "sasl.jaas.config": f"{module} required username={quote(self.kafka_principal('job')[0])} "
                                            f"password={quote(self.kafka_password('job'))};"})
        if sec["protocol"].endswith("SSL"):
            if "ca_file" in sec:
                out.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": str(self._path(sec["ca_file"]))})
            if "certificate_file" in sec:
                out.update({"ssl.keystore.type": "PEM",
                            "ssl.keystore.certificate.chain": self._path(sec["certificate_file"]).read_text(),
                            "ssl.keystore.key": self._path(sec["key_file"]).read_text()})
        return out

    @property
    def store(self) -> dict:
        return self.data["store"]

    @property
    def store_uses_local_ferretdb(self) -> bool:
        return "uri" not in self.store and "uri_env" not in self.store

    @property
    def store_uri(self) -> str:
        if "uri" in self.store:
            return self.store["uri"]
        if "uri_env" in self.store:
            value = os.environ.get(self.store["uri_env"])
            if not value:
                raise UserError(f"store.uri_env: the environment variable {self.store['uri_env']} (the store's "
                                f"connection string) is not set ({self.file})")
            if not value.startswith(("mongodb://", "mongodb+srv://")):
                raise UserError(f"store.uri_env: {self.store['uri_env']} does not hold a mongodb:// connection string")
            return value
        return f"mongodb://{self.store['host']}:{self.store['port']}/?directConnection=true"

    @property
    def store_uri_for_display(self) -> str:
        """The store URI without its password: what status, errors and the demo print."""
        return redact_uri(self.store_uri)

    @property
    def archive(self) -> dict:
        return self.data["archive"]

    @property
    def archive_path(self) -> Path:
        p = Path(self.archive["path"])
        return p if p.is_absolute() else self.state_dir / p

    @property
    def review_ledger_file(self) -> Path | None:
        """The review decisions' second copy (review.ledger_file, else in the archive; None with neither)."""
        configured = self.data["review"].get("ledger_file")
        if configured:
            return self._in_state(configured)
        return self.archive_path / "reviews" / "decisions.jsonl" if self.archive["enabled"] else None

    @property
    def reviewers_file(self) -> Path:
        """The enrolled reviewers' public keys (review.reviewers_file; evidence/reviewer_keys.py)."""
        return self._in_state(self.data["review"]["reviewers_file"])

    def _in_state(self, value: str) -> Path:
        p = Path(os.path.expanduser(value))
        return p if p.is_absolute() else self.state_dir / p

    @property
    def signing_key_file(self) -> Path:
        """The Ed25519 key pair that signs chain heads (config chain.signing_key_file)."""
        return self._in_state(self.data["chain"]["signing_key_file"])

    @property
    def link_key_file(self) -> Path:
        """The key the job authenticates each link with and verify checks them with (config chain.link_key_file)."""
        return self._in_state(self.data["chain"]["link_key_file"])

    @property
    def public_key_file(self) -> Path:
        """The public key verify checks chain heads with (config chain.public_key_file)."""
        return self._in_state(self.data["chain"]["public_key_file"])

    @property
    def flink(self) -> dict:
        return self.data["flink"]

    @property
    def demo_log(self) -> Path:
        p = Path(self.data["demo"]["log_path"])
        return p if p.is_absolute() else self.state_dir / p

    @property
    def demo_server(self) -> str:
        return self.data["demo"]["server"]

    def collector_sources(self) -> list[dict]:
        """The configured files plus the demo's generated log, as the collector ships them."""
        sources = [dict(s) for s in self.data["sources"] if "path" in s]
        if not any(os.path.normpath(s["path"]) == str(self.demo_log) for s in sources):
            sources.append({"path": str(self.demo_log), "server": self.demo_server, "format": "percona-json"})
        return sources

    def listen_sources(self) -> list[dict]:
        """The addresses the collector receives syslog on (sources with ``listen``), each with its
        ``server`` (a name, or ``from-host``) and ``format`` (``syslog`` unless named)."""
        return [dict(s) for s in self.data["sources"] if "listen" in s]


def _chosen(path: str | os.PathLike | None) -> tuple[Path, Path | None]:
    """The file to read and the folder its relative paths start from (None: the file's own)."""
    given = path or os.environ.get(ENV_CONFIG)
    if given or paths.IN_CHECKOUT:
        return Path(given or paths.DEFAULT_CONFIG).resolve(), None
    here = Path("auditpipe.yaml").resolve()
    return (here, None) if here.exists() else (paths.DEFAULT_CONFIG, paths.default_home())


def load(path: str | os.PathLike | None = None) -> Config:
    """Loads the config file: the given path, else $AUDITPIPE_CONFIG, else auditpipe.yaml of the checkout
    (an installed wheel: ./auditpipe.yaml, else its bundled defaults with paths under default_home)."""
    chosen, home = _chosen(path)
    if not chosen.exists():
        raise UserError(f"configuration file {chosen} does not exist (give --config FILE or set {ENV_CONFIG})")
    try:
        raw = yaml.safe_load(chosen.read_text())
    except yaml.YAMLError as e:
        raise UserError(f"{chosen} is not valid YAML: {e}") from None
    data = validate(raw, str(chosen))
    ports = {
        "kafka.port": data["kafka"]["port"],
        "kafka.controller_port": data["kafka"]["controller_port"],
        "flink.rest_port": data["flink"]["rest_port"],
    }
    if data["flink"]["mode"] == "cluster":
        ports["flink.rpc_port"] = data["flink"]["rpc_port"]
    if "uri" in data["store"] and "uri_env" in data["store"]:
        raise UserError(f"invalid configuration in {chosen}:\n  - store.uri_env: give either store.uri or store.uri_env")
    if "uri" not in data["store"] and "uri_env" not in data["store"]:
        ports["store.port"] = data["store"]["port"]
    seen: dict[int, str] = {}
    for key, port in ports.items():
        if port in seen:
            raise UserError(f"invalid configuration in {chosen}:\n  - {key}: port {port} is already used by {seen[port]}")
        seen[port] = key
    if size_bytes(data["max_line_size"]) > MAX_OF_MAX_LINE:
        raise UserError(f"invalid configuration in {chosen}:\n  - max_line_size: {data['max_line_size']} is more than "
                        "8m (a dead letter keeps the line whole, and must fit a 16 MiB MongoDB document)")
    cfg = Config(data=data, file=chosen, home=home)
    problems = (_source_identity_problems(cfg) + _kafka_problems(cfg) + _compliance_problems(cfg)
                + _baseline_problems(cfg) + _cef_problems(cfg))
    if problems:
        raise UserError(f"invalid configuration in {chosen}:\n" + "\n".join(f"  - {p}" for p in problems))
    return cfg


def _kafka_problems(cfg: Config) -> list[str]:
    """What the schema cannot say about kafka: keys that only make sense together."""
    k, sec = cfg.kafka, cfg.kafka["security"]
    problems = []
    if k["min_insync_replicas"] > k["replication_factor"]:
        problems.append(f"kafka.min_insync_replicas: {k['min_insync_replicas']} is more than kafka.replication_factor "
                        f"({k['replication_factor']}): no write could ever succeed")
    if cfg.kafka_is_local and k["replication_factor"] > 1:
        problems.append(f"kafka.replication_factor: {k['replication_factor']} replicas need as many brokers; the local "
                        "stack runs one (set kafka.bootstrap_servers to use a cluster)")
    sasl = sec["protocol"].startswith("SASL_")
    for key in ("sasl_mechanism", "username", "password_env"):
        if sasl and key not in sec:
            problems.append(f"kafka.security.{key}: required with protocol {sec['protocol']}")
        if not sasl and key in sec:
            problems.append(f"kafka.security.{key}: only used with protocol SASL_PLAINTEXT or SASL_SSL "
                            f"(protocol is {sec['protocol']})")
    if "principals" in sec:
        if not sasl:
            problems.append(f"kafka.security.principals: only used with protocol SASL_PLAINTEXT or SASL_SSL "
                            f"(protocol is {sec['protocol']})")
        names = [sec.get("username"), *(p["username"] for p in sec["principals"].values())]
        if len(set(names)) < len(names):
            problems.append("kafka.security.principals: each part needs a user of its own, other than "
                            f"kafka.security.username (the administrator): {', '.join(str(n) for n in names)}")
    tls = sec["protocol"].endswith("SSL")
    problems += _tls_file_problems(cfg, sec, "kafka.security", tls,
                                   f"only used with protocol SSL or SASL_SSL (protocol is {sec['protocol']})")
    if cfg.kafka_is_local and tls:
        problems.append(f"kafka.security.protocol: the local broker does not serve {sec['protocol']} (it has no "
                        "certificate); use SASL_PLAINTEXT locally, or a cluster (kafka.bootstrap_servers)")
    if cfg.kafka_is_local and sasl and sec.get("sasl_mechanism", "PLAIN") != "PLAIN":
        problems.append(f"kafka.security.sasl_mechanism: the local broker's administrator, as whom the broker and "
                        f"its controller log in, uses PLAIN, not {sec['sasl_mechanism']} (give SCRAM to the parts: "
                        "kafka.security.principals.<part>.sasl_mechanism)")
    return problems


def _cef_problems(cfg: Config) -> list[str]:
    """What the schema cannot say about alerts.cef: plain TCP only to loopback, TLS files only for a tls://
    target, and there."""
    c = cfg.data["alerts"].get("cef")
    if c is None:
        return []
    out = []
    if not 1 <= int(c["target"].rsplit(":", 1)[1]) <= 65535:
        out.append(f"alerts.cef.target: {c['target']} has no port from 1 to 65535")
    if c["target"].startswith("tcp://") and not is_loopback(c["target"]):
        out.append(f"alerts.cef.target: {c['target']} is another host: alerts leave this one only over tls:// (the "
                   "receiver's certificate checked), never as plain TCP that anyone on the way reads and changes; "
                   "tcp:// is for a receiver on loopback (docs/alerts.md \"CEF over syslog\")")
    return out + _tls_file_problems(cfg, c, "alerts.cef", c["target"].startswith("tls://"),
                                    f"only used with a tls:// target (target is {c['target']})")


def _tls_file_problems(cfg: Config, section: dict, name: str, tls: bool, unused: str) -> list[str]:
    """A TLS client's ca_file, certificate_file and key_file in ``section`` (config key ``name``): used
    only with ``tls`` (else ``unused`` says why), each a file, the certificate and its key together."""
    out = []
    for key in ("ca_file", "certificate_file", "key_file"):
        if key in section and not tls:
            out.append(f"{name}.{key}: {unused}")
        elif key in section and not cfg._path(section[key]).is_file():
            out.append(f"{name}.{key}: {cfg._path(section[key])} is not a file")
    if ("certificate_file" in section) != ("key_file" in section):
        out.append(f"{name}.certificate_file and key_file: give both or neither")
    return out


def _baseline_problems(cfg: Config) -> list[str]:
    """What the schema cannot say about alerts.baselines: keys that only make sense together."""
    b = cfg.data["alerts"]["baselines"]
    out = []
    if duration_seconds(b["forget_after"]) <= duration_seconds(b["learning"]):
        out.append(f"alerts.baselines.forget_after: {b['forget_after']} is not longer than alerts.baselines.learning "
                   f"({b['learning']}): a principal would be forgotten before it is judged")
    # each learned rule's settings are under its name, as the other rules' are under theirs
    if b[contract.rule("off_hours")]["reference"] == "business-hours" and not cfg.data["compliance"]["business_hours"]:
        out.append("alerts.baselines.off_hours.reference: business-hours, but compliance.business_hours is empty")
    return out


def _compliance_problems(cfg: Config) -> list[str]:
    """What the schema cannot check: time zones of the change windows and business hours."""
    from zoneinfo import available_timezones

    out = []
    zones = None
    for key in ("change_windows", "business_hours"):
        for i, w in enumerate(cfg.data["compliance"][key]):
            if w["timezone"] != "UTC":
                zones = zones or available_timezones()
                if w["timezone"] not in zones:
                    out.append(f"compliance.{key}[{i}].timezone: '{w['timezone']}' is not an IANA time zone name")
            if "*" in w["days"] and len(w["days"]) > 1:
                out.append(f"compliance.{key}[{i}].days: '*' means every day; list days or '*', not both")
    return out


#: ``server`` of a listen source that names each sender by its host
FROM_HOST = "from-host"


def is_loopback(listen: str) -> bool:
    """Whether an address (proto://host:port) is on this host alone: a loopback address or localhost."""
    import ipaddress

    host = listen.split("://", 1)[1].rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: whatever it resolves to


def _is_address(name: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def _source_identity_problems(cfg: Config) -> list[str]:
    """Each source needs a server name of its own and a path of its own.

    Event ids are ``<server>/<record>``: two sources with one server name would give different
    records the same id (the store would keep one and report the other as a collision), and one
    file shipped twice under two names would store every record twice.
    """
    from zoneinfo import available_timezones

    problems = []
    zones = None
    for i, src in enumerate(cfg.data["sources"]):
        if src.get("timezone", "UTC") != "UTC":
            zones = zones or available_timezones()
            if src["timezone"] not in zones:
                problems.append(f"sources[{i}].timezone: '{src['timezone']}' is not an IANA time zone name "
                                "(e.g. UTC, Europe/Berlin, America/New_York)")
    by_listen: dict[str, str] = {}
    for i, src in enumerate(cfg.data["sources"]):
        where = f"sources[{i}]"
        if ("path" in src) == ("listen" in src):
            problems.append(f"{where}: give either path (a file to tail) or listen (an address to receive syslog on)")
            continue
        if "path" in src:
            if "server" not in src:
                problems.append(f"{where}.server: a file source needs its server's name (it is part of every event id)")
            elif src["server"] == FROM_HOST:
                problems.append(f"{where}.server: {FROM_HOST} is for a listen source; name the server this file is of")
            for k in ("tls_cert", "tls_key", "tls_ca", "tls_peers"):
                if k in src:
                    problems.append(f"{where}.{k}: only a tls:// listen source takes it")
            continue
        tls = src["listen"].startswith("tls://")
        if tls and not ("tls_cert" in src and "tls_key" in src):
            problems.append(f"{where}: a tls:// listen source needs tls_cert and tls_key (the receiver's certificate and key)")
        for k in ("tls_cert", "tls_key", "tls_ca", "tls_peers"):
            if k in src and not tls:
                problems.append(f"{where}.{k}: only a tls:// listen source takes it")
        if "tls_peers" in src and "tls_ca" not in src:
            problems.append(f"{where}.tls_peers: needs tls_ca, the CA that signed the permitted senders' certificates")
        if not is_loopback(src["listen"]):
            if not (tls and "tls_ca" in src and "tls_peers" in src):
                problems.append(f"{where}.listen: {src['listen']} is reachable from other hosts: there a sender must "
                                "prove who it is, so only tls:// with tls_ca and tls_peers (mutual TLS, the permitted "
                                "certificates' names) is taken; plain TCP and UDP listen on loopback only "
                                "(docs/collectors.md \"Receiving syslog\")")
            if src.get("server", FROM_HOST) == FROM_HOST:
                problems.append(f"{where}.server: a listen source reachable from other hosts needs the name of the "
                                "server its permitted senders speak for (from-host takes a sender's word for it)")
        port = src["listen"].rsplit(":", 1)[1]
        if not 1 <= int(port) <= 65535:
            problems.append(f"{where}.listen: port {port} is not between 1 and 65535")
        address = src["listen"].split("://", 1)[1]
        proto = "udp" if src["listen"].startswith("udp://") else "tcp"
        if (proto, address) in by_listen:
            problems.append(f"{where}.listen: {address} ({proto}) is already {by_listen[(proto, address)]}'s")
        else:
            by_listen[(proto, address)] = where
    by_server: dict[str, str] = {}
    by_path: dict[str, str] = {}
    file_where = [f"sources[{i}]" for i, s in enumerate(cfg.data["sources"]) if "path" in s]
    for i, src in enumerate(cfg.collector_sources()):
        where = file_where[i] if i < len(file_where) else "demo"
        if "server" not in src:
            continue
        path = os.path.normpath(src["path"])
        if src["server"] in by_server:
            problems.append(f"{where}.server: '{src['server']}' is already the server of {by_server[src['server']]}; "
                            "every source needs its own server name (it is part of every event id)")
        else:
            by_server[src["server"]] = where
        if path in by_path:
            problems.append(f"{where}.path: {src['path']} is already shipped by {by_path[path]}; a file shipped "
                            "twice would store every record twice")
        else:
            by_path[path] = where
    if any("listen" in src and src.get("server", FROM_HOST) == FROM_HOST for src in cfg.data["sources"]):
        for name, where in by_server.items():
            if _is_address(name):  # a from-host sender is named by its address: it could speak for this one
                problems.append(f"{where}.server: '{name}' is an IP address, which a from-host listen source names "
                                "its senders by: a sender there could speak for this source; give it a name")
    for i, src in enumerate(cfg.data["sources"]):
        if "listen" in src and "path" not in src and src.get("server", FROM_HOST) != FROM_HOST:
            if src["server"] in by_server:
                problems.append(f"sources[{i}].server: '{src['server']}' is already the server of {by_server[src['server']]}; "
                                "every source needs its own server name (it is part of every event id)")
            else:
                by_server[src["server"]] = f"sources[{i}]"
    return problems


def docs_markdown() -> str:
    """docs/configuration.md, generated from the schema."""
    schema = load_schema()
    out = ["# Configuration reference", "",
           "<!-- generated by `./auditpipe config docs` from schemas/config.schema.json; do not edit -->", "",
           schema["description"], "", "| key | type | default | description |", "|---|---|---|---|"]

    def walk(props: dict, prefix: str) -> None:
        for key, sub in props.items():
            if "$ref" in sub:
                base = dict(schema["$defs"][sub["$ref"].split("/")[-1]])
                base.update({k: v for k, v in sub.items() if k != "$ref"})
                sub = base
            full = prefix + key
            typ = sub.get("type", "enum: " + ", ".join(sub.get("enum", [])) if "enum" in sub else "")
            if isinstance(typ, list):
                typ = " or ".join(typ)
            default = sub.get("default")
            default = "" if default in ({}, [], None) else f"`{json.dumps(default)}`"
            desc = sub.get("description", "").replace("|", "\\|")
            out.append(f"| `{full}` | {typ} | {default} | {desc} |")
            if sub.get("type") == "object" and "properties" in sub:
                walk(sub["properties"], full + ".")
            if sub.get("type") == "array" and "properties" in sub.get("items", {}):
                walk(sub["items"]["properties"], full + "[].")

    walk(schema["properties"], "")
    return "\n".join(out) + "\n"
