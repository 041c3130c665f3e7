"""`auditpipe init`: prepares Kafka and the store for services auditpipe does not run itself.

The docker-compose deployment (docker-compose.yml, docs/deployment.md) runs this once from the
CLI's own image before the Flink job starts, so the deployment creates its topics, its capped
events collection, the other collections and their indexes with the very code that `auditpipe up`
uses and the tests cover (topics.ensure_topics, components.store.ensure_collections): the two
cannot drift apart. It also creates the store's least-privilege users and writes the job's
options for the Flink cluster.

Store users (MongoDB only; FerretDB 1.24 manages no users): the init connects with an
administrator's connection string (store.uri_env) and creates or updates, in the `admin`
database (so every client authenticates with authSource=admin, as the Grafana data source's
provisioning says), the users of STORE_USERS, each with one role on the auditpipe database (the
custom ones: CUSTOM_ROLES; the table of them: docs/deployment.md "Store users"). No user can
update or delete an event, an evidence document, an alert or a chain head, nor change or remove a
review decision; the job's options name the job's users, never the administrator.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from auditpipe import progress
from auditpipe.config import Config
from auditpipe.errors import UserError
from auditpipe.process import wait_until
from auditpipe.stack.components import kafka_grants
from auditpipe.stack.flink import flink_rest, job_settings
from auditpipe.stack.flink.job import FlinkJob
from auditpipe.stack.kafka import kafka_acls, topics
from auditpipe.store.client import is_ferretdb, mongo_client
from auditpipe.store.collections import ensure_collections


@dataclass(frozen=True)
class StoreUser:
    name_env: str
    password_env: str
    role: str
    who: str


#: the job's role, a custom one (job_role), kept in the users' database
JOB_ROLE = "auditpipeJob"
#: the direct path's Fluentd's role (direct_role), kept there too
DIRECT_ROLE = "auditpipeDirect"
#: the reviewers' role (reviewer_role)
REVIEWER_ROLE = "auditpipeReviewer"
#: the verifier's role (verifier_role)
VERIFIER_ROLE = "auditpipeVerifier"
#: the role of the job's second user, who writes the sessions and baselines (profiles_role)
PROFILES_ROLE = "auditpipeProfiles"

STORE_USERS = {
    "job": StoreUser("AUDITPIPE_JOB_STORE_USER", "AUDITPIPE_JOB_STORE_PASSWORD", JOB_ROLE, "the Flink job"),
    "profiles": StoreUser("AUDITPIPE_PROFILES_STORE_USER", "AUDITPIPE_PROFILES_STORE_PASSWORD", PROFILES_ROLE,
                          "the Flink job's sessions and baselines"),
    "verifier": StoreUser("AUDITPIPE_VERIFIER_STORE_USER", "AUDITPIPE_VERIFIER_STORE_PASSWORD", VERIFIER_ROLE,
                          "the verifier"),
    "reader": StoreUser("AUDITPIPE_READER_STORE_USER", "AUDITPIPE_READER_STORE_PASSWORD", "read",
                        "Grafana and the reports"),
    "direct": StoreUser("AUDITPIPE_DIRECT_STORE_USER", "AUDITPIPE_DIRECT_STORE_PASSWORD", DIRECT_ROLE,
                        "the direct path's Fluentd"),
    "reviewer": StoreUser("AUDITPIPE_REVIEWER_STORE_USER", "AUDITPIPE_REVIEWER_STORE_PASSWORD", REVIEWER_ROLE,
                          "auditpipe review"),
}


def credentials(user: StoreUser) -> tuple[str, str] | None:
    """(name, password) from the environment, None when neither is set; one without the other is an error."""
    name, password = os.environ.get(user.name_env), os.environ.get(user.password_env)
    if not name and not password:
        return None
    if not name or not password:
        missing = user.password_env if name else user.name_env
        raise UserError(f"{missing} is not set: the store user of {user.who} needs both {user.name_env} and "
                        f"{user.password_env}")
    return name, password


#: How .env.example's values begin: a password still so is no password (everyone has that file).
PLACEHOLDER = "replace-me"
#: The passwords of the deployment that init sees, besides the store users' (docker-compose.yml passes them).
OTHER_PASSWORDS = ("GRAFANA_ADMIN_PASSWORD",)


def refuse_placeholders(cfg: Config) -> None:
    """A UserError naming each password that still holds .env.example's placeholder."""
    parts = (None, *cfg.kafka["security"].get("principals", {}))
    kafka = [p[1] for part in parts if (p := cfg.kafka_principal(part)) is not None]
    names = [u.password_env for u in STORE_USERS.values()] + list(OTHER_PASSWORDS) + sorted(set(kafka))
    left = [n for n in names if os.environ.get(n, "").startswith(PLACEHOLDER)]
    password = urllib.parse.urlsplit(cfg.store_uri).password if "://" in cfg.store_uri else None
    if password and urllib.parse.unquote(password).startswith(PLACEHOLDER):
        left.insert(0, "the store URI's password (MONGO_ROOT_PASSWORD)")
    if left:
        raise UserError(f"{', '.join(left)} still hold{'s' if len(left) == 1 else ''} the placeholder of "
                        ".env.example: set passwords of your own (in .env.secrets) before init")


USERS_DATABASE = "admin"  # where init creates the users (their roles name the auditpipe database)


def with_user(uri: str, name: str, password: str, database: str = USERS_DATABASE) -> str:
    """``uri`` with another user, who authenticates against ``database`` (where init created it)."""
    parts = urllib.parse.urlsplit(uri)
    host = parts.netloc.rsplit("@", 1)[-1]
    userinfo = f"{urllib.parse.quote(name, safe='')}:{urllib.parse.quote(password, safe='')}"
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True) if k != "authSource"]
    query.append(("authSource", database))
    return urllib.parse.urlunsplit((parts.scheme, f"{userinfo}@{host}", parts.path or "/",
                                    urllib.parse.urlencode(query), parts.fragment))


def profiles_apart() -> bool:
    """Whether the environment names the profiles user: the job then writes sessions and baselines as
    that user, and its own role reaches neither."""
    return credentials(STORE_USERS["profiles"]) is not None


def job_role(cfg: Config) -> dict:
    """The job role's privileges and inherited roles: read on the database; insert into each collection
    the job writes, and update (an upsert needs both) only where it upserts; the sessions and baselines
    not, when the profiles user writes them."""
    database = cfg.store["database"]
    return {"privileges": [{"resource": {"db": database, "collection": name},
                            "actions": ["insert", "update"] if upserts else ["insert"]}
                           for name, upserts in job_settings.job_collections(cfg, profiles_apart()).items()],
            "roles": [{"role": "read", "db": database}]}


def profiles_role(cfg: Config) -> dict:
    """The privileges of the job's second user: read, insert and update (upsert) the sessions and the
    baselines; insert a dead letter for a document the store refuses; nothing on the events, the
    chain or the evidence, and no read of the rest of the database. The sessions and baselines come
    from what a database user typed (statements, object names): a flaw in the code that builds them
    reaches no event."""
    database = cfg.store["database"]
    return {"privileges": [{"resource": {"db": database, "collection": name}, "actions": ["find", "insert", "update"]}
                           for name in job_settings.profile_collections(cfg)]
            + [{"resource": {"db": database, "collection": cfg.store["dead_letter_collection"]}, "actions": ["insert"]}],
            "roles": []}


def verifier_role(cfg: Config) -> dict:
    """The verifier's privileges (`verify --watch`): read the database; insert its integrity alerts, never
    change or remove an alert or anything it verifies; keep the review queue, a view of what awaits
    review (its deadline check, evidence/reviews.py refresh_queue)."""
    database, s = cfg.store["database"], cfg.store
    return {"privileges": [{"resource": {"db": database, "collection": s["alerts_collection"]}, "actions": ["insert"]},
                           {"resource": {"db": database, "collection": s["review_queue_collection"]},
                            "actions": ["insert", "update", "remove"]}],
            "roles": [{"role": "read", "db": database}]}


def reviewer_role(cfg: Config) -> dict:
    """`auditpipe review`'s privileges: read the database (what awaits review, the decisions); insert a
    decision, never update or remove one; remove a day it decided from the review queue."""
    database, s = cfg.store["database"], cfg.store
    return {"privileges": [{"resource": {"db": database, "collection": s["reviews_collection"]}, "actions": ["insert"]},
                           {"resource": {"db": database, "collection": s["review_queue_collection"]},
                            "actions": ["remove"]}],
            "roles": [{"role": "read", "db": database}]}


def direct_role(cfg: Config) -> dict:
    """The direct path's privileges (collectors/fluentd/mongo-direct.conf): its output lists the
    collections (is the events collection there, and capped?), creates a missing one capped, and
    inserts; nothing read, updated or removed. Its collections are the store's events and dead-letter
    collections (docker-compose.yml gives the same names to fluentd-direct)."""
    database, s = cfg.store["database"], cfg.store
    return {"privileges": [{"resource": {"db": database, "collection": ""}, "actions": ["listCollections"]}]
            + [{"resource": {"db": database, "collection": s[key]}, "actions": ["createCollection", "insert"]}
               for key in ("events_collection", "dead_letter_collection")],
            "roles": []}


#: the custom roles and what makes their definitions
CUSTOM_ROLES = {JOB_ROLE: job_role, DIRECT_ROLE: direct_role, REVIEWER_ROLE: reviewer_role,
                VERIFIER_ROLE: verifier_role, PROFILES_ROLE: profiles_role}


def ensure_role(db, cfg: Config, name: str) -> str:
    exists = db.command("rolesInfo", name).get("roles")
    db.command("updateRole" if exists else "createRole", name, **CUSTOM_ROLES[name](cfg))
    return f"store role {name}: " + ("updated" if exists else "created")


def ensure_store_users(cfg: Config) -> list[str]:
    """Creates or updates the users of STORE_USERS that the environment names; returns notes."""
    db = mongo_client(cfg)[USERS_DATABASE]
    wanted = {key: c for key, user in STORE_USERS.items() if (c := credentials(user)) is not None}
    if not wanted:
        return ["no store users in the environment (AUDITPIPE_JOB_STORE_USER ...): every client uses the "
                "connection string it is given"]
    if is_ferretdb(db):
        return ["the store is FerretDB, which manages no users here: the store users were not created"]
    notes = [ensure_role(db, cfg, role) for role in sorted({STORE_USERS[key].role for key in wanted} & set(CUSTOM_ROLES))]
    for key, (name, password) in wanted.items():
        user = STORE_USERS[key]
        roles = [{"role": user.role, "db": USERS_DATABASE if user.role in CUSTOM_ROLES else cfg.store["database"]}]
        exists = db.command("usersInfo", name).get("users")
        db.command("updateUser" if exists else "createUser", name, pwd=password, roles=roles)
        notes.append(f"store user {name}: role {user.role} on {cfg.store['database']} ({user.who}), "
                     + ("updated" if exists else "created"))
    return notes


def cluster_target(cfg: Config, checkpoint_dir: str, archive_path: str) -> job_settings.Target:
    job, profiles = credentials(STORE_USERS["job"]), credentials(STORE_USERS["profiles"])
    uri = with_user(cfg.store_uri, *job) if job else cfg.store_uri
    return job_settings.Target(store_uri=uri, checkpoint_dir=checkpoint_dir, archive_path=archive_path, local=False,
                               signing_key_file=str(cfg.signing_key_file), link_key_file=str(job_link_key_file(cfg)),
                               profiles_uri=with_user(cfg.store_uri, *profiles) if profiles else None)


def job_link_key_file(cfg: Config) -> Path:
    """The job's copy of the links' key: beside its signing key (the job-config volume, which the Flink
    containers copy for their user), while config chain.link_key_file is verify's (the chain-links volume)."""
    return cfg.signing_key_file.parent / "chain-links.key"


def make_signing_key(cfg: Config) -> bool:
    """The chain heads' key pair at config chain.signing_key_file (the job's) and chain.public_key_file
    (verify's), and the links' key at chain.link_key_file (verify's) with the job's copy, each made once:
    an existing key is kept, since what it signed verifies only with it."""
    from auditpipe.evidence import signing

    made = signing.make_key_pair(cfg.signing_key_file, cfg.public_key_file)
    return signing.make_link_key(cfg.link_key_file, job_link_key_file(cfg)) or made


#: the cluster's TLS identity and the Flink settings that use it, beside the job's keys in the job-config
#: volume, which the Flink containers copy for their user (deploy/docker/auditpipe-flink-entry appends the
#: settings to FLINK_PROPERTIES)
FLINK_TLS_SETTINGS = "flink-tls.yaml"


def make_flink_tls(cfg: Config) -> bool:
    """The deployment's Flink cluster identity (stack/flink/flink_rest.py make_identity: a self-signed key for the
    names the containers and a published port use) and its settings, REST and internal connections over
    mutual TLS (flink_rest.ssl_settings), made once beside the job's keys. Returns whether it made them."""
    from auditpipe.evidence.signing import write_secret

    folder = cfg.signing_key_file.parent
    settings_file = folder / FLINK_TLS_SETTINGS
    made = not settings_file.exists()
    d = flink_rest.make_identity(folder / "flink-tls", ["jobmanager", "localhost", "127.0.0.1"],
                                 "auditpipe Flink cluster")
    # the Flink containers copy the folder's files, not its folders (the entry), to the same path
    keystore = folder / f"flink-tls-{flink_rest.KEYSTORE}"
    write_secret(keystore, (d / flink_rest.KEYSTORE).read_bytes())
    settings = flink_rest.ssl_settings(str(keystore), (d / flink_rest.PASSWORD).read_text(), internal=True)
    write_secret(settings_file, "".join(f"{k}: {json.dumps(v)}\n" for k, v in settings.items()).encode())
    return made


def write_job_properties(cfg: Config, out: Path, target: job_settings.Target) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.touch(mode=0o600)  # holds the job user's password
    out.chmod(0o600)
    out.write_text(FlinkJob(cfg).job_properties(None, target))
    return out


def init(cfg: Config, job_properties: Path | None, checkpoint_dir: str, archive_path: str,
         wait_seconds: float = 120, store_users_only: bool = False) -> None:
    """``store_users_only``: the store users the environment names and nothing else, with no Kafka
    (the direct path's init)."""
    refuse_placeholders(cfg)
    notes = []
    if not store_users_only:
        with progress.step(f"waiting for Kafka at {cfg.kafka_bootstrap}"):
            wait_until(lambda: bool(topics.admin(cfg.kafka_client).list_topics(timeout=5)), wait_seconds,
                       f"waiting for Kafka at {cfg.kafka_bootstrap}")
        with progress.step("topics"):
            notes += kafka_acls.ensure_configured_topics(cfg, kafka_grants())
    with progress.step(f"waiting for the store at {cfg.store_uri_for_display}"):
        wait_until(lambda: bool(mongo_client(cfg, 3000).admin.command("ping")), wait_seconds,
                   f"waiting for the store at {cfg.store_uri_for_display}")
    if not store_users_only:
        with progress.step("collections and indexes"):
            notes += ensure_collections(cfg)
    with progress.step("store users"):
        notes += ensure_store_users(cfg)
    if job_properties is not None and not store_users_only:
        with progress.step(f"the chain's keys: {cfg.signing_key_file}, {cfg.link_key_file}"):
            if not make_signing_key(cfg):
                notes.append(f"the chain's keys {cfg.signing_key_file}, {cfg.link_key_file} exist: kept")
        with progress.step("the Flink cluster's TLS identity (REST and internal connections, mutual)"):
            if not make_flink_tls(cfg):
                notes.append(f"the Flink cluster's TLS identity in {cfg.signing_key_file.parent} exists: kept")
        with progress.step(f"the job's options: {job_properties}"):
            write_job_properties(cfg, job_properties, cluster_target(cfg, checkpoint_dir, archive_path))
    for note in notes:
        progress.info(f"  ! {note}")
