"""Saved queries (schemas/queries.yaml) over the archive: ``to_sql`` translates the aggregation
stages they use into one DuckDB statement over the archive's Parquet files, so the archive answers
the same question as the store."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from auditpipe.archive.reader import connect, files_for, mongo_like, parquet_source
from auditpipe.errors import UserError


class Unsupported(UserError):
    pass


def _column(path: str) -> str:
    """A field path ($-less) as a DuckDB expression: a.b is field b of struct a; x.0 the list's first item."""
    parts = path.split(".")
    expr = '"' + parts[0].replace('"', '""') + '"'
    for p in parts[1:]:
        expr = f"({expr})[{int(p) + 1}]" if p.isdigit() else f"struct_extract({expr}, '{p}')"
    return expr


def _literal(value: Any, params: list) -> str:
    params.append(value)
    return "?"


# the event fields that are lists: a condition on one is about its items, as in MongoDB
LIST_COLUMNS = frozenset({"tables", "data_classes", "access_violations", "controls"})


def _condition(field: str, spec: Any, params: list) -> str:
    col = _column(field)
    if field in LIST_COLUMNS and not (isinstance(spec, dict) and set(spec) <= {"$exists"}):
        if isinstance(spec, dict) and set(spec) == {"$in"}:
            return ("(" + " OR ".join(f"coalesce(list_contains({col}, {_literal(x, params)}), false)"
                                      for x in spec["$in"]) + ")") if spec["$in"] else "false"
        if isinstance(spec, dict):
            raise Unsupported(f"the archive cannot run {', '.join(spec)} on the list {field}")
        return f"coalesce(list_contains({col}, {_literal(spec, params)}), false)"
    if isinstance(spec, dict) and spec and all(k.startswith("$") for k in spec):
        parts = []
        for op, v in spec.items():
            if op == "$exists":
                if field.split(".")[-1].isdigit():  # an item of a list exists: the list is that long
                    base = _column(".".join(field.split(".")[:-1]))
                    n = int(field.split(".")[-1]) + 1
                    parts.append(f"coalesce(len({base}) >= {n}, false)" if v else f"coalesce(len({base}) < {n}, true)")
                else:
                    parts.append(f"{col} IS NOT NULL" if v else f"{col} IS NULL")
            elif op in ("$gte", "$gt", "$lt", "$lte"):
                sql = {"$gte": ">=", "$gt": ">", "$lt": "<", "$lte": "<="}[op]
                parts.append(f"{col} {sql} {_literal(v, params)}")
            elif op == "$ne":
                parts.append(f"{col} IS DISTINCT FROM {_literal(v, params)}")
            elif op == "$in":
                parts.append("(" + " OR ".join(f"{col} = {_literal(x, params)}" for x in v) + ")" if v else "false")
            else:
                raise Unsupported(f"the archive cannot run {op} (in $match on {field})")
        return " AND ".join(parts)
    return f"{col} = {_literal(spec, params)}"


# $dateTrunc's units, in milliseconds: whole minutes, hours and UTC days since the epoch, whatever
# DuckDB's session time zone
TRUNC_MS = {"minute": 60_000, "hour": 3_600_000, "day": 86_400_000}


def _value(expr: Any) -> str:
    if isinstance(expr, str) and expr.startswith("$"):
        return _column(expr[1:])
    if isinstance(expr, dict) and set(expr) == {"$dateTrunc"}:
        spec = expr["$dateTrunc"]
        if not (isinstance(spec, dict) and set(spec) == {"date", "unit"} and spec["unit"] in TRUNC_MS):
            raise Unsupported(f"the archive runs $dateTrunc with a date and a unit ({', '.join(TRUNC_MS)}) only")
        ms = TRUNC_MS[spec["unit"]]
        return f"make_timestamp((epoch_ms({_value(spec['date'])}) // {ms}) * {ms} * 1000)"
    if isinstance(expr, (int, float)) and not isinstance(expr, bool):
        return repr(expr)
    raise Unsupported(f"the archive cannot compute {expr!r}")


def to_sql(pipeline: list[dict], source: str) -> tuple[str, list]:
    """One DuckDB statement for an aggregation pipeline of the stages the saved queries use."""
    params: list = []
    ctes = [f"s0 AS (SELECT * FROM {source})"]
    for i, stage in enumerate(pipeline, start=1):
        if len(stage) != 1:
            raise Unsupported(f"stage {i} has more than one operator")
        (op, spec), = stage.items()
        prev = f"s{i - 1}"
        if op == "$match":
            where = " AND ".join(_condition(f, s, params) for f, s in spec.items()) or "true"
            sql = f"SELECT * FROM {prev} WHERE {where}"
        elif op == "$group":
            key = spec["_id"]
            if isinstance(key, dict) and not any(k.startswith("$") for k in key):
                key_sql = "struct_pack(" + ", ".join(f'"{k}" := {_value(v)}' for k, v in key.items()) + ")"
            elif key is None:
                key_sql = "NULL"
            else:
                key_sql = _value(key)
            accs = []
            for name, acc in spec.items():
                if name == "_id":
                    continue
                (aop, arg), = acc.items()
                if aop == "$sum" and arg == 1 or aop == "$count":
                    accs.append(f'count(*) AS "{name}"')
                elif aop == "$sum":
                    accs.append(f'coalesce(sum({_value(arg)}), 0) AS "{name}"')
                else:
                    raise Unsupported(f"the archive cannot run {aop} in $group")
            sql = f'SELECT {key_sql} AS "_id", {", ".join(accs)} FROM {prev} GROUP BY 1'
        elif op == "$sort":
            order = ", ".join(f"{_column(f)} {'ASC' if d == 1 else 'DESC'} NULLS FIRST" for f, d in spec.items())
            sql = f"SELECT * FROM {prev} ORDER BY {order}"
        elif op == "$limit":
            sql = f"SELECT * FROM {prev} LIMIT {int(spec)}"
        elif op == "$skip":
            sql = f"SELECT * FROM {prev} OFFSET {int(spec)}"
        elif op == "$unwind":
            if not isinstance(spec, str) or not spec.startswith("$") or "." in spec:
                raise Unsupported("the archive runs $unwind in its short form on a top-level field only")
            f = spec[1:]
            sql = f'SELECT * REPLACE (unnest("{f}") AS "{f}") FROM {prev}'
        elif op == "$count":
            sql = f'SELECT count(*) AS "{spec}" FROM {prev}'
        elif op == "$project":
            keep = [f for f, v in spec.items() if v in (1, True) and f != "_id"]
            drop = [f for f, v in spec.items() if v in (0, False)]
            if keep:
                cols = ([] if spec.get("_id", 1) in (0, False) else ['"_id"']) + [f'"{f}"' for f in keep]
                sql = f"SELECT {', '.join(cols)} FROM {prev}"
            else:
                sql = f"SELECT * EXCLUDE ({', '.join(chr(34) + f + chr(34) for f in drop)}) FROM {prev}"
        else:
            raise Unsupported(f"the archive cannot run {op}")
        ctes.append(f"s{i} AS ({sql})")
    last = len(ctes) - 1
    return "WITH " + ",\n".join(ctes) + f"\nSELECT * FROM s{last}", params


def run_pipeline(root: Path, collection: str, pipeline: list[dict], since: datetime | None,
                 until: datetime | None) -> list[dict]:
    if collection != "events":
        raise UserError(f"the archive holds events only; this query reads '{collection}' (run it without --archive)")
    files = files_for(root, since, until)
    if not files:
        return []
    return run_on(connect(), parquet_source(files), pipeline)


def run_on(con, source: str, pipeline: list[dict]) -> list[dict]:
    """The pipeline over ``source`` (a DuckDB table expression) on the connection ``con``."""
    # DuckDB keeps the order of a sorted CTE through the projections and limits after it
    # (preserve_insertion_order, on by default)
    sql, params = to_sql(pipeline, source)
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [{n: mongo_like(v) for n, v in zip(names, row) if v is not None} for row in cur.fetchall()]
