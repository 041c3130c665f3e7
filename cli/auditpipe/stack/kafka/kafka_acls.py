"""Kafka users and ACLs (docs/security.md "Kafka"): with ``kafka.security.principals`` each part of the
pipeline connects as a SASL user of its own and may do only what it does: the collector produces to the raw
topic (and reads it back to resume), the job reads the raw topic in its consumer group and writes
the dead-letter and alerts topics, and the event stream's in transactions of its own (docs/stream.md), and
the CEF forwarder reads the alerts topic in its group (docs/alerts.md), and a SIEM's read-only user of a
stream topic reads that topic alone, in groups of its own prefix (docs/stream.md). The administrator
(``kafka.security.username``: the CLI, which creates topics and ACLs and raises integrity alerts) is the
broker's super user.

Who may use which topic is written once, in schemas/topics.yaml (``producers``, ``consumers``); the
consumer groups and transactional ids are the parts' own, passed in as ``Grants`` (the parts list,
stack/components, gathers them). `up` creates the ACLs on the local broker, whose authorizer is on when
principals are configured, and `auditpipe init` on a deployment's (ensure_configured_topics
calls ``ensure_acls``): the same code for both. Creating an ACL that exists changes nothing.
A principal with a SCRAM mechanism gets its credentials the same way (``ensure_scram_credentials``,
set again at every `up` and `init`, so a changed password takes effect there).
"""

from __future__ import annotations

from dataclasses import dataclass

from auditpipe.config import Config
from auditpipe.errors import UserError
from auditpipe.stack import limits
from auditpipe.stack.kafka import topics


@dataclass(frozen=True)
class Grants:
    """What the parts use besides topics, as (part, name) pairs: the consumer groups they read in
    and the prefixes of the transactional ids they write with."""
    groups: tuple[tuple[str, str], ...] = ()
    transactions: tuple[tuple[str, str], ...] = ()


#: (part, prefix): the consumer groups a SIEM's read-only user of a stream topic may read in: any whose id
#: begins with the prefix (a SIEM names its own groups)
SIEM_GROUP_PREFIX = "auditpipe-siem-"
GROUP_PREFIXES = tuple((f"siem_{role}", f"{SIEM_GROUP_PREFIX}{role}") for role in ("events", "ocsf", "ecs"))

PRODUCE = ("WRITE", "DESCRIBE")
CONSUME = ("READ", "DESCRIBE")


def wanted(cfg: Config, grants: Grants) -> list[tuple[str, str, str, str]]:
    """(principal, resource type, resource name, operation) of every ACL the configuration asks for, the
    parts' groups and transactional ids those of ``grants``."""
    principals = cfg.kafka["security"].get("principals", {})
    out = []
    for t in topics.definitions().values():
        for part, ops in [*((p, PRODUCE) for p in t.producers), *((p, CONSUME) for p in t.consumers)]:
            if part in principals:
                out += [(f"User:{principals[part]['username']}", "TOPIC", t.name, op) for op in ops]
    for part, group in (*grants.groups, *GROUP_PREFIXES):
        if part in principals:
            out.append((f"User:{principals[part]['username']}", "GROUP", group, "READ"))
    for part, prefix in grants.transactions:
        if part in principals and cfg.data["stream"]["formats"]:
            out += [(f"User:{principals[part]['username']}", "TRANSACTIONAL_ID", prefix, op) for op in PRODUCE]
    return sorted(set(out))


#: PBKDF2 iterations of the SCRAM credentials made here (the broker's minimum is 4096)
SCRAM_ITERATIONS = 8192


def ensure_scram_credentials(cfg: Config) -> list[str]:
    """Sets, as the administrator, the SCRAM credentials of each principal whose mechanism is SCRAM;
    returns notes."""
    from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

    sec = cfg.kafka["security"]
    upserts = [UserScramCredentialUpsertion(p["username"], ScramCredentialInfo(
                   ScramMechanism[mechanism.replace("-", "_")], SCRAM_ITERATIONS), cfg.kafka_password(part).encode())
               for part, p in sorted(sec.get("principals", {}).items())
               if (mechanism := cfg.kafka_mechanism(part)).startswith("SCRAM-")]
    if not upserts:
        return []
    from confluent_kafka import KafkaException

    client = topics.admin(cfg.kafka_client)  # held until the answers are in
    refused = {}
    for user, f in client.alter_user_scram_credentials(upserts, request_timeout=30).items():
        try:
            f.result()
        except KafkaException as e:
            refused[user] = e.args[0].str() if e.args else str(e)
    if refused:  # every refused user named, in a fixed order: the answers come back in any order
        users = sorted(refused)
        raise UserError(f"kafka.security.principals: Kafka at {cfg.kafka_bootstrap} did not take the SCRAM "
                        f"credentials of user{'s' if len(users) > 1 else ''} {', '.join(users)}: "
                        f"{refused[users[0]][:300]} (the administrator, kafka.security.username, sets them; "
                        "the brokers must offer the mechanism)")
    return []


def ensure_acls(cfg: Config, grants: Grants) -> list[str]:
    """Creates the ACLs of ``wanted`` (allow, any host, literal names); returns notes. Nothing without principals."""
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType
    from confluent_kafka.error import KafkaException

    acls = wanted(cfg, grants)
    if not acls:
        return []
    # a transactional id is the prefix and what the writer adds, a SIEM's group the prefix and its own name:
    # those ACLs hold for the prefix
    prefixes = {prefix for _, prefix in GROUP_PREFIXES}
    bindings = [AclBinding(ResourceType[rtype], name, ResourcePatternType.PREFIXED
                           if rtype == "TRANSACTIONAL_ID" or (rtype == "GROUP" and name in prefixes)
                           else ResourcePatternType.LITERAL, principal, "*", AclOperation[op], AclPermissionType.ALLOW)
                for principal, rtype, name, op in acls]
    client = topics.admin(cfg.kafka_client)  # held until the answers are in: a collected client cancels its requests
    futures = client.create_acls(bindings, request_timeout=30)
    try:
        for f in futures.values():
            f.result()
    except KafkaException as e:
        if "SECURITY_DISABLED" in str(e) or "No Authorizer" in str(e):
            return [f"Kafka at {cfg.kafka_bootstrap} has no authorizer: the {len(acls)} ACLs of "
                    "kafka.security.principals were not created, and every authenticated user may do anything"]
        raise
    return []


def ensure_configured_topics(cfg: Config, grants: Grants) -> list[str]:
    """ensure_topics with the configuration's limits, replicas and partitions, then the SCRAM credentials
    and the ACLs of kafka.security.principals (below): what `up` and `init` run."""
    k = cfg.kafka
    notes = topics.ensure_topics(cfg.kafka_client, limits.from_config(cfg), k["replication_factor"],
                                 k["min_insync_replicas"], {"raw": k["raw_partitions"]})
    return notes + ensure_scram_credentials(cfg) + ensure_acls(cfg, grants)
