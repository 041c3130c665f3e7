"""The Flink job's settings as the CLI writes them from the configuration: the one table of them.

Every option key here is the job's own, checked against schemas/job-contract.json (which the job
prints; auditpipe.contract), and written nowhere else in the CLI
(tests/unit/stack/test_job_settings.py). The job is where they mean something
(docs/job-options.md); this module only writes them, for the local MiniCluster, a Flink cluster
(the deployment) and ``auditpipe parse --enrich``, so that all of them see the same settings.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from auditpipe import contract
from auditpipe.config import Config, duration_seconds
from auditpipe.errors import UserError
from auditpipe.stack import limits
from auditpipe.stack.components.base import properties_value
from auditpipe.stack.kafka import topics


@dataclass(frozen=True)
class Target:
    """Where the job runs: what differs between the local MiniCluster and a Flink cluster."""
    store_uri: str  # the job's own store user on a cluster
    checkpoint_dir: str  # a URI every JobManager and TaskManager reaches
    archive_path: str  # a URI every TaskManager reaches
    local: bool  # the local MiniCluster: its REST endpoint is set here (a cluster's own configuration says it)
    signing_key_file: str | None = None  # where the job's tasks read the heads' signing key; None: unsigned
    link_key_file: str | None = None  # where the job's tasks read the links' key; None: links without a MAC
    profiles_uri: str | None = None  # who writes sessions and baselines on a cluster; None: store_uri


def _millis(text: str) -> str:
    return f"{int(duration_seconds(text) * 1000)}ms"


def _store(key: str) -> Callable[[Config, Target], str]:
    return lambda cfg, t: cfg.store[key]


#: the store's collections the job is told of, as its options name them (store.collection.<name>)
STORE_COLLECTIONS = ("events", "evidence", "stats", "stats-hourly", "rollups", "dead-letters", "alerts", "chain-heads",
                     "servers", "sessions", "baselines", "kafka-lag")


def _collection_key(name: str) -> str:
    """The configuration's key of the collection the job's option store.collection.<name> names."""
    return ("dead_letter" if name == "dead-letters" else name.replace("-", "_")) + "_collection"


# (job option, its value from the configuration and the target; None: not set, the job's default holds)
OPTIONS: tuple[tuple[str, Callable[[Config, Target], str | None]], ...] = (
    ("kafka.bootstrap-servers", lambda cfg, t: cfg.kafka_bootstrap),
    ("kafka.topic.raw", lambda cfg, t: topics.topic_name("raw")),
    ("kafka.topic.dead-letter", lambda cfg, t: topics.topic_name("deadletter")),
    ("kafka.topic.alerts", lambda cfg, t: topics.topic_name("alerts")),
    ("kafka.topic.events", lambda cfg, t: topics.topic_name("events")),
    ("kafka.topic.ocsf", lambda cfg, t: topics.topic_name("ocsf")),
    ("kafka.topic.ecs", lambda cfg, t: topics.topic_name("ecs")),
    ("stream.formats", lambda cfg, t: ",".join(cfg.data["stream"]["formats"])),
    ("kafka.group-id", lambda cfg, t: job_group_id()),
    ("kafka.dead-letter.max-message-bytes", lambda cfg, t: str(limits.from_config(cfg).dead_letter_message_bytes)),
    ("store.uri", lambda cfg, t: t.store_uri),
    ("store.profiles-uri", lambda cfg, t: t.profiles_uri),
    ("store.database", _store("database")),
    *((f"store.collection.{name}", _store(_collection_key(name))) for name in STORE_COLLECTIONS),
    ("checkpoint.interval", lambda cfg, t: _millis(cfg.flink["checkpoint_interval"])),
    ("archive.path", lambda cfg, t: t.archive_path if cfg.archive["enabled"] else None),
    ("chain.signing-key-file", lambda cfg, t: t.signing_key_file),
    ("chain.link-key-file", lambda cfg, t: t.link_key_file),
)

# Flink's own settings, passed through the job's `flink.` family (docs/job-options.md)
FLINK: tuple[tuple[str, Callable[[Config, Target], str | None]], ...] = (
    ("flink.rest.address", lambda cfg, t: "127.0.0.1" if t.local else None),
    ("flink.rest.bind-address", lambda cfg, t: "127.0.0.1" if t.local else None),
    ("flink.rest.port", lambda cfg, t: str(cfg.flink["rest_port"]) if t.local else None),
    # every listener of the MiniCluster on loopback (the BLOB server binds where the JobManager does),
    # and its REST API read-only: no jar upload, no run, no cancel (docs/security.md)
    ("flink.jobmanager.bind-host", lambda cfg, t: "127.0.0.1" if t.local else None),
    ("flink.taskmanager.bind-host", lambda cfg, t: "127.0.0.1" if t.local else None),
    ("flink.taskmanager.host", lambda cfg, t: "127.0.0.1" if t.local else None),
    ("flink.web.submit.enable", lambda cfg, t: "false" if t.local else None),
    ("flink.web.cancel.enable", lambda cfg, t: "false" if t.local else None),
    ("flink.parallelism.default", lambda cfg, t: str(cfg.flink["parallelism"])),
    ("flink.execution.checkpointing.dir", lambda cfg, t: t.checkpoint_dir),
    ("flink.execution.checkpointing.num-retained", lambda cfg, t: "2"),
    ("flink.restart-strategy.type", lambda cfg, t: "exponential-delay"),
    ("flink.taskmanager.memory.network.max", lambda cfg, t: "128m"),
    # keyed state in RocksDB with incremental checkpoints: a checkpoint holds what changed since the
    # last one, not every remembered id (docs/scaling.md "State"); RocksDB's memory is Flink's managed
    # memory, outside the heap (the MiniCluster's; a cluster's TaskManagers set their own fraction)
    ("flink.state.backend.type", lambda cfg, t: "rocksdb"),
    ("flink.execution.checkpointing.incremental", lambda cfg, t: "true"),
    # universal compaction: merging sorted runs of similar size rewrites far less at each checkpoint's
    # flush than levelled compaction, whose merges rewrite a server's whole range of ids (each new file
    # spans it: the newest ids and the deletions of the oldest); measured in bench/README.md "The long run"
    ("flink.state.backend.rocksdb.compaction.style", lambda cfg, t: "UNIVERSAL"),
    # what the configuration has no key for: a MANIFEST that does not grow for ever (every checkpoint
    # uploads it whole): pipelines/flink-job/.../state/RocksDbFiles.java
    ("flink.state.backend.rocksdb.options-factory", lambda cfg, t: "io.auditpipe.flink.state.RocksDbFiles"),
    ("flink.taskmanager.memory.managed.size", lambda cfg, t: "256m" if t.local else None),
    # RocksDB's working files (the state itself) under the stack's state folder, not the system's /tmp
    ("flink.io.tmp.dirs", lambda cfg, t: str(local_tmp_dir(cfg)) if t.local else None),
)


def local_tmp_dir(cfg: Config) -> Path:
    """The local job's working folder (RocksDB's files among them), made when absent."""
    d = cfg.state_dir / "flink" / "tmp"
    d.mkdir(parents=True, exist_ok=True)
    return d


def head_interval_seconds(cfg: Config) -> float:
    """The job's chain.head-interval: the config's flink.job_options, else the job's default."""
    return _duration_seconds(cfg, "chain.head-interval")


def max_ahead_seconds(cfg: Config) -> float:
    """The job's event-time.max-ahead: how far ahead of its shipping an event's time is trusted."""
    return _duration_seconds(cfg, "event-time.max-ahead")


def _duration_seconds(cfg: Config, key: str) -> float:
    try:
        return contract.duration_seconds(key, cfg.flink["job_options"])
    except ValueError as e:
        raise UserError(str(e)) from None


#: the collections whose documents the job updates (upserts: counts, the servers list, sessions,
#: baselines); into the
#: others (events, evidence, alerts, chain heads, dead letters, lag samples) it only inserts
UPSERTED_COLLECTIONS = ("store.collection.stats", "store.collection.stats-hourly", "store.collection.rollups",
                        "store.collection.servers", "store.collection.sessions", "store.collection.baselines")
#: the collections the job writes as store.profiles-uri's user where one is given (the deployment's
#: profiles role: stack/deployment.py), the baselines also read
PROFILE_COLLECTIONS = ("store.collection.sessions", "store.collection.baselines")


def job_collections(cfg: Config, profiles_apart: bool = False) -> dict[str, bool]:
    """Each collection the job writes, and whether it updates documents there (the deployment's job
    role grants exactly that: stack/deployment.py); without the sessions and baselines when
    ``profiles_apart`` (another user writes them)."""
    return {value(cfg, None): key in UPSERTED_COLLECTIONS
            for key, value in OPTIONS if key.startswith("store.collection.")
            and not (profiles_apart and key in PROFILE_COLLECTIONS)}


def profile_collections(cfg: Config) -> list[str]:
    """The names of the sessions and baselines collections (PROFILE_COLLECTIONS)."""
    return [value(cfg, None) for key, value in OPTIONS if key in PROFILE_COLLECTIONS]


def stream_transactional_id_prefix() -> str:
    """The event stream's transactional ids' prefix (the job's default: the CLI does not set it)."""
    return next(o["default"] for o in contract.contract()["options"] if o["key"] == "stream.transactional-id-prefix")


def job_group_id() -> str:
    """The consumer group of the job's store path: where its committed offsets (the lag) are."""
    return next(o["default"] for o in contract.contract()["options"] if o["key"] == "kafka.group-id")


STATE_BACKEND_KEY = "flink.state.backend.type"
#: beside the checkpoints: the state backend that writes them (a checkpoint restores only on its own)
STATE_BACKEND_MARKER = "state-backend"
#: the folder beside the checkpoint folders for the savepoints that move a job's state to another state backend
SAVEPOINTS = "savepoints"
#: what wrote checkpoints without a marker: every version of the job before RocksDB
UNMARKED_STATE_BACKEND = "hashmap"


def state_backend(cfg: Config) -> str:
    """The state backend the job is configured with: RocksDB (FLINK, above) unless flink.job_options says."""
    configured = next(value for key, value in FLINK if key == STATE_BACKEND_KEY)(cfg, None)
    return str(cfg.flink["job_options"].get(STATE_BACKEND_KEY, configured)).lower()


def checkpoints_state_backend(checkpoint_dir: Path) -> str:
    """The state backend that wrote the checkpoints in ``checkpoint_dir`` (its marker; none: the heap's)."""
    marker = checkpoint_dir / STATE_BACKEND_MARKER
    try:
        return marker.read_text().strip() or UNMARKED_STATE_BACKEND
    except FileNotFoundError:
        return UNMARKED_STATE_BACKEND


def choose_state_backend(cfg: Config, checkpoint_dir: Path, restoring: bool, canonical: bool = False) -> str:
    """The configured state backend, or, restoring a checkpoint another one wrote, that one: a
    checkpoint restores only on the backend that wrote it; a savepoint in Flink's canonical format
    (``canonical``) restores on either, which is how the stack moves a job's state to the configured
    one (stack/flink/job.py ``move_state``). Marks the folder with the one chosen."""
    chosen = state_backend(cfg)
    if restoring and not canonical:
        written_by = checkpoints_state_backend(checkpoint_dir)
        if written_by != chosen:
            from auditpipe import progress

            progress.info(f"  flink: the checkpoints in {checkpoint_dir} were written by the {written_by} state "
                          f"backend, and a checkpoint restores only on its own: the job starts on {written_by}, "
                          f"then moves to {chosen} through a savepoint in Flink's canonical format")
            chosen = written_by
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    (checkpoint_dir / STATE_BACKEND_MARKER).write_text(chosen + "\n")
    return chosen


def job_properties(cfg: Config, target: Target, restore_from: Path | None = None,
                   backend: str | None = None) -> dict[str, str]:
    """The job's properties file, as entries: options, Flink settings, Kafka client security,
    compliance and alert settings, then the config's own flink.job_options; ``backend``: the state
    backend, when it is not the configured one (choose_state_backend)."""
    entries: dict[str, str] = {}
    for key, value in (*OPTIONS, *FLINK):
        v = value(cfg, target)
        if v is not None:
            entries[key] = v
    if target.local:
        from auditpipe.stack.flink import flink_rest

        entries.update({f"flink.{k}": v for k, v in flink_rest.flink_settings(cfg).items()})
    for key, value in cfg.kafka_java_client.items():
        if key != "bootstrap.servers":
            entries[f"kafka.client.{key}"] = value  # security: TLS and SASL (config kafka.security)
    entries.update(compliance_properties(cfg))
    entries.update(alert_properties(cfg))
    for key, value in cfg.flink["job_options"].items():
        entries[key] = str(value).lower() if isinstance(value, bool) else str(value)
    if backend is not None:
        entries[STATE_BACKEND_KEY] = backend
    if restore_from is not None:
        # the job checks the snapshot before it starts from it: it leaves behind the state of a sink
        # it no longer has and refuses to lose any other (io.auditpipe.flink.state.RestoreCheck)
        entries["flink.execution.state-recovery.path"] = restore_from.as_uri()
    return entries


def compliance_properties(cfg: Config) -> dict[str, str]:
    """The config's ``compliance`` section as the job's compliance keys (docs/compliance.md)."""
    c = cfg.data["compliance"]
    key = contract.compliance_key
    out: dict[str, str] = {}
    for name in contract.data_classes():
        dc = c["data_classes"][name]
        if dc["tables"]:
            out[key("compliance.data-class.<class>.tables", class_=name)] = ",".join(dc["tables"])
        if "allowed_principals" in dc:
            out[key("compliance.data-class.<class>.allowed-principals", class_=name)] = ",".join(dc["allowed_principals"])
    if c["principals"]["administrators"]:
        out[key("compliance.principals.administrators")] = ",".join(c["principals"]["administrators"])
    if c["principals"]["service_accounts"]:
        out[key("compliance.principals.service-accounts")] = ",".join(c["principals"]["service_accounts"])
    out[key("compliance.masking.pan")] = "true" if c["masking"]["pan"] else "false"
    out[key("compliance.masking.credentials")] = "true" if c["masking"]["credentials"] else "false"
    for name, regex in c["masking"]["patterns"].items():
        out[key("compliance.masking.pattern.<name>", name=name)] = regex
    for section, template in (("change_windows", "compliance.change-windows"), ("business_hours", "compliance.business-hours")):
        if c[section]:
            out[key(template)] = "; ".join(f"{','.join(w['days'])} {w['from']}-{w['to']} {w['timezone']}" for w in c[section])
    return out


def alert_properties(cfg: Config) -> dict[str, str]:
    """The config's ``alerts`` section as the job's ``alerts.*`` options: each setting's path, with
    dashes for underscores, is the option's key (alerts.brute_force.window -> alerts.brute-force.window)."""
    out: dict[str, str] = {}

    def walk(section: dict, path: str) -> None:
        for name, value in section.items():
            key = f"{path}.{name.replace('_', '-')}"
            if isinstance(value, dict):
                walk(value, key)
            else:
                if key not in contract.option_keys():
                    raise KeyError(f"config {key.replace('-', '_')}: the job has no option {key} ({contract.FILE.name})")
                out[key] = str(value)

    alerts = dict(cfg.data["alerts"])
    webhook = alerts.pop("webhook", None)
    alerts.pop("cef", None)  # the CLI's forwarder sends CEF (stack/alerts/forwarder.py), not the job
    walk(alerts, "alerts")
    if webhook is not None:
        out.update(webhook_properties(cfg))
    return out


@dataclass(frozen=True)
class Webhook:
    """Where alerts are POSTed (config alerts.webhook): the URL, the HMAC key or None, timeout, retries."""
    url: str
    secret: str | None
    timeout: str
    retries: int


def webhook(cfg: Config) -> Webhook | None:
    """The configured webhook: its URL (from url, or the variable url_env names, held to url's own
    rule) and the signing key from the variable secret_env names; None without one."""
    import re

    from auditpipe.config import load_schema

    w = cfg.data["alerts"].get("webhook")
    if w is None:
        return None

    def from_env(key: str) -> str:
        value = os.environ.get(w[key], "")
        if not value:
            raise UserError(f"alerts.webhook.{key} names {w[key]}, which is not set in the environment")
        return value

    url = w["url"] if "url" in w else from_env("url_env")
    rule = load_schema()["properties"]["alerts"]["properties"]["webhook"]["properties"]
    if not re.match(rule["url"]["pattern"], url):
        raise UserError(f"alerts.webhook: the URL in {w.get('url_env', 'url')} is not allowed: {rule['url']['description']}")
    return Webhook(url, from_env("secret_env") if "secret_env" in w else None,
                   str(w.get("timeout", rule["timeout"]["default"])), int(w.get("retries", rule["retries"]["default"])))


def webhook_properties(cfg: Config) -> dict[str, str]:
    """The webhook's options: URL, signing key, and the timeout and retries where the config sets them."""
    w, section = webhook(cfg), cfg.data["alerts"]["webhook"]
    out = {"alerts.webhook.url": w.url}
    if w.secret is not None:
        out["alerts.webhook.secret"] = w.secret
    for name in ("timeout", "retries"):
        if name in section:
            out[f"alerts.webhook.{name}"] = str(section[name])
    return out


def properties_text(entries: dict[str, str]) -> str:
    """Entries as a Java properties file."""
    return "".join(f"{k}={properties_value(v)}\n" for k, v in entries.items())
