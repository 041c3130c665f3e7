"""Saved aggregations (schemas/queries.yaml) and ad-hoc pipelines against the store."""

from __future__ import annotations

import copy
import functools
import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any

import yaml

from auditpipe import paths
from auditpipe.config import Config, redact_uri
from auditpipe.errors import UserError
from auditpipe.store.client import mongo_client
from auditpipe.terminal import shown

COLLECTION_ROLES = {"events": "events_collection", "evidence": "evidence_collection",
                    "stats": "stats_collection", "stats_hourly": "stats_hourly_collection", "rollups": "rollups_collection",
                    "servers": "servers_collection",
                    "kafka_lag": "kafka_lag_collection",
                    "dead_letters": "dead_letter_collection", "alerts": "alerts_collection",
                    "sessions": "sessions_collection", "reviews": "reviews_collection",
                    "review_queue": "review_queue_collection"}
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
FAR_FUTURE = datetime(9999, 1, 1, tzinfo=timezone.utc)


def catalog() -> dict:
    """schemas/queries.yaml, parsed once (and again when the file changes); a copy each call, which the
    caller may change. A report asks for it over a hundred times: parsed each time, that was half the
    time of a quarter's report."""
    return copy.deepcopy(_parsed_catalog((paths.SCHEMAS / "queries.yaml").stat().st_mtime_ns))


@functools.lru_cache(maxsize=1)
def _parsed_catalog(mtime_ns: int) -> dict:
    return yaml.load((paths.SCHEMAS / "queries.yaml").read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def saved_queries() -> dict[str, dict]:
    return catalog()["queries"]


def parameters() -> dict[str, dict]:
    """The catalog's parameters: kind (time, list, string, int), optional, description."""
    return catalog()["parameters"]


def evidence_kind(name: str) -> str | None:
    """The evidence kind (the job contract's evidence_kinds) whose condition the events query's first
    $match holds word for word, or None. Such a query only ever counts or lists evidence, so the
    evidence collection (the same documents, kept for the evidence retention) answers it unchanged:
    the dashboards read it there."""
    from auditpipe import contract

    q = saved_queries()[name]
    if q["collection"] != "events":
        return None
    first = q["pipeline"][0].get("$match", {})
    for kind, condition in contract.evidence_kinds().items():
        if all(field in first and first[field] == value for field, value in condition.items()):
            return kind
    return None


def panel_form(name: str) -> tuple[str, list]:
    """What a dashboard panel of the saved query reads, as (collection role, pipeline): the query's
    rollup form on the daily rollups where it has one (whole UTC days: docs/queries.md "Rollups"),
    the evidence collection for an evidence query (``evidence_kind``), else its own collection. The
    first two keep their rows for the evidence retention, the capped collection for minutes."""
    q = saved_queries()[name]
    if "rollup" in q:
        return "rollups", q["rollup"]
    return ("evidence" if evidence_kind(name) else q["collection"]), q["pipeline"]


def parse_time(text: str | None, default: datetime, now: datetime | None = None) -> datetime:
    """'15m', '2h', '7d' (that long before now) or an ISO-8601 date-time (UTC unless it says otherwise)."""
    if text is None:
        return default
    now = now or datetime.now(timezone.utc)
    m = re.fullmatch(r"(\d+)([smhd])", text)
    if m:
        n = int(m.group(1))
        return now - timedelta(**{{"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[m.group(2)]: n})
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UserError(f"'{text}' is neither a duration like 15m, 2h, 7d nor an ISO-8601 time") from None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


UNSET = _Unset()  # an optional parameter not given: the condition it stands in is removed


def bind(pipeline: Any, params: dict[str, Any], declared: dict[str, dict] | None = None) -> Any:
    """Replaces every {"$param": name} in the pipeline with its value. An optional parameter
    (``declared``, default the catalog's) that is not given removes the field condition holding it."""
    declared = parameters() if declared is None else declared
    return _prune(_bind(pipeline, params, declared))


def _bind(value: Any, params: dict[str, Any], declared: dict[str, dict]) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$param"}:
            name = value["$param"]
            if params.get(name) is not None:
                return params[name]
            if declared.get(name, {}).get("optional"):
                return UNSET
            about = declared.get(name, {}).get("description")
            raise UserError(f"the query needs parameter '{name}'" + (f": {about}" if about else ""))
        return {k: _bind(v, params, declared) for k, v in value.items()}
    if isinstance(value, list):
        return [_bind(v, params, declared) for v in value]
    return value


def _holds_unset(value: Any) -> bool:
    if value is UNSET:
        return True
    if isinstance(value, dict):
        return any(_holds_unset(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_unset(v) for v in value)
    return False


def _prune(value: Any) -> Any:
    """Removes each field condition of a $match that holds an unset optional parameter."""
    if isinstance(value, list):
        return [_prune(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"$match"} and isinstance(value["$match"], dict):
            return {"$match": {k: v for k, v in value["$match"].items() if not _holds_unset(v)}}
        return {k: _prune(v) for k, v in value.items()}
    return value


def parse_params(pairs: list[str] | None) -> dict[str, Any]:
    """--param name=value pairs, checked against the catalog's parameters (ints as ints, a list as its
    comma-separated items: the form the reports print under each table). The time range and the
    servers have options of their own."""
    declared = parameters()
    out: dict[str, Any] = {}
    for pair in pairs or []:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            raise UserError(f"--param '{pair}': write it as name=value")
        if name not in declared:
            raise UserError(f"--param '{name}': no such parameter; the catalog's: {', '.join(declared)}")
        kind = declared[name]["kind"]
        if kind == "time" or name == "servers":
            raise UserError(f"--param '{name}' is set by its own option (--since/--until, --server)")
        if kind == "list":
            items = [v.strip() for v in text.split(",") if v.strip()]
            if not items:
                raise UserError(f"--param '{name}=': give one or more values, comma-separated")
            out[name] = items
            continue
        if kind == "int":
            try:
                out[name] = int(text)
            except ValueError:
                raise UserError(f"--param '{name}={text}': a whole number is needed") from None
        else:
            out[name] = text
    return out


def collection_name(cfg: Config, role: str) -> str:
    if role not in COLLECTION_ROLES:
        raise UserError(f"unknown collection '{role}' (one of: {', '.join(COLLECTION_ROLES)})")
    return cfg.store[COLLECTION_ROLES[role]]


def saved(name: str) -> dict:
    """The saved query ``name``; a UserError naming the saved queries when there is none."""
    queries = saved_queries()
    if name not in queries:
        raise UserError(f"no saved query '{name}'; saved queries: {', '.join(queries)}")
    return queries[name]


def stable_order(rows: list[dict], pipeline: list[dict]) -> list[dict]:
    """The rows in the order of the pipeline's last $sort, ties broken by the rows' JSON (their _id
    first, where they have one): the store and DuckDB each leave ties in an order of their own, and
    the same evidence must read the same (a report's digest). Rows cut by a $limit keep what the
    tier chose; only their order is fixed. Each row's sort key is made once and the JSON only for
    rows that tie (a quarter's minutes by server: 650,000 rows, none tied)."""
    sorts = [st["$sort"] for st in pipeline if "$sort" in st]
    if not sorts:
        return rows
    spec = [(path.split("."), direction) for path, direction in sorts[-1].items()]

    def key(value: Any):
        if value is None:
            return (False, "", 0)
        kind = type(value)
        if kind in (str, int, float, datetime):
            return (True, kind.__name__, value)
        if isinstance(value, (int, float, str, datetime)):
            return (True, kind.__name__, value)
        return (True, kind.__name__, json.dumps(value, sort_keys=True, default=str))

    def keys(row: dict) -> tuple:
        out = []
        for parts, _ in spec:
            value: Any = row
            for part in parts:
                value = value.get(part) if isinstance(value, dict) else None
            out.append(key(value))
        return tuple(out)

    keyed = [(keys(r), r) for r in rows]
    for i in range(len(spec) - 1, -1, -1):
        keyed.sort(key=lambda kr: kr[0][i], reverse=spec[i][1] == -1)
    out = [r for _, r in keyed]
    i = 0
    while i < len(keyed):  # the runs of equal sort keys, by their JSON, as if sorted by it first
        j = i + 1
        while j < len(keyed) and keyed[j][0] == keyed[i][0]:
            j += 1
        if j - i > 1:
            out[i:j] = sorted(out[i:j], key=lambda r: json.dumps(r, sort_keys=True, default=str))
        i = j
    return out


# Collections whose documents belong to no server: their queries cannot be narrowed to servers.
SERVERLESS_COLLECTIONS = {"kafka_lag", "reviews", "review_queue"}  # a day's review covers every server


def params_used(pipeline: Any) -> set[str]:
    """The names of the parameters a pipeline refers to."""
    if isinstance(pipeline, dict):
        if set(pipeline) == {"$param"}:
            return {pipeline["$param"]}
        return set().union(*(params_used(v) for v in pipeline.values())) if pipeline else set()
    if isinstance(pipeline, list):
        return set().union(*(params_used(v) for v in pipeline)) if pipeline else set()
    return set()


# Stages that write: a query must never overwrite the evidence it reads (events, stats, dead letters).
WRITE_STAGES = {"$out", "$merge"}
# Operators that run JavaScript in the store: code, not a query, with the store's own rights.
CODE_OPERATORS = {"$where", "$function", "$accumulator"}
#: An ad-hoc pipeline's time limit in the store (maxTimeMS): one person's query cannot hold the store.
PIPELINE_TIME_LIMIT_S = 60


def _operators(value: Any, wanted: set[str]) -> set[str]:
    """Every operator of ``wanted`` anywhere in the pipeline, sub-pipelines ($facet, $lookup, $unionWith) included."""
    found = set()
    if isinstance(value, dict):
        found |= wanted & set(value)
        for v in value.values():
            found |= _operators(v, wanted)
    elif isinstance(value, list):
        for v in value:
            found |= _operators(v, wanted)
    return found


def run_pipeline(cfg: Config, role: str, pipeline: list) -> list[dict]:
    from pymongo.errors import ExecutionTimeout

    if not isinstance(pipeline, list) or not all(isinstance(s, dict) and len(s) == 1 for s in pipeline):
        raise UserError("a pipeline is a JSON list of stages, each an object with one key like {\"$match\": {...}}")
    writes = _operators(pipeline, WRITE_STAGES)
    if writes:
        raise UserError(f"queries only read: {', '.join(sorted(writes))} would write into the store "
                        "(export with --json instead)")
    code = _operators(pipeline, CODE_OPERATORS)
    if code:
        raise UserError(f"queries run no code: {', '.join(sorted(code))} would run JavaScript in the store "
                        "(use the aggregation operators instead)")
    db = mongo_client(cfg)[cfg.store["database"]]
    try:
        return list(db[collection_name(cfg, role)].aggregate(pipeline, maxTimeMS=int(PIPELINE_TIME_LIMIT_S * 1000)))
    except ExecutionTimeout:
        raise UserError(f"the pipeline ran longer than {PIPELINE_TIME_LIMIT_S} s in the store and was stopped: "
                        "narrow it (a $match on event_time and server first)") from None
    except Exception as e:  # noqa: BLE001 - the store's own message says what is wrong
        raise UserError(f"the store rejected the pipeline: {redact_uri(str(e))}") from None


def parse_pipeline_json(text: str) -> list:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"--pipeline is not valid JSON: {e}") from None


def _flatten(doc: dict, prefix: str = "") -> dict:
    """Nested fields become dotted columns; the fields of a group's _id become columns of their own."""
    out = {}
    for k, v in doc.items():
        if isinstance(v, dict):
            out.update(_flatten(v, "" if k == "_id" else f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _cell(v: Any) -> str:
    if isinstance(v, datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S")
    return "" if v is None else shown(v)


def format_table(rows: list[dict]) -> str:
    if not rows:
        return "(no rows)"
    flat = [_flatten(r) for r in rows]
    columns: list[str] = []
    for r in flat:
        for k in r:
            if k not in columns:
                columns.append(k)
    cells = [[_cell(r.get(c)) for c in columns] for r in flat]
    columns = [shown(c) for c in columns]  # field names come from the data too
    widths = [min(max(len(c), *(len(row[i]) for row in cells)), 60) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(widths[i]) for i, c in enumerate(columns)),
             "  ".join("-" * w for w in widths)]
    for row in cells:
        lines.append("  ".join(v[:60].ljust(widths[i]) for i, v in enumerate(row)))
    return "\n".join(lines)


def format_json(rows: list[dict]) -> str:
    return json.dumps(rows, default=lambda v: v.isoformat() if isinstance(v, datetime) else str(v), indent=2)
