"""Continuous verification (docs/security.md, stack/verification.py): with nobody running `verify`, the
supervisor finds an event edited, one deleted and one forged in the store and raises a critical
`integrity` alert for each, in the alerts collection and on the alerts topic; `status` shows the last
verified link, then the findings; each alert also reaches the webhook, signed. An alert deleted from
the store comes back at the next full pass. Its own stack, whose supervisor verifies what is new
every 5 s and the whole store every 20 s (the shared end-to-end stack verifies nothing: its tests
tamper with and empty the store). What an incremental pass finds by itself:
tests/e2e/evidence/test_incremental_verification.py."""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from helpers.stack import running_stack

from auditpipe.stack.alerts import webhook
from auditpipe.tools.simulate import simulate

pytestmark = pytest.mark.e2e

PORTS = {"kafka": 31292, "controller": 31293, "store": 27617, "flink": 31281}
SERVER = "integrity-watch"


KEY = "integrity-watch-webhook-key"
posted: list[tuple[dict, bytes]] = []


class Hook(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - the stdlib's name
        posted.append((dict(self.headers), self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def watched(tmp_path_factory):
    hook = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    os.environ["AUDITPIPE_TEST_WEBHOOK_KEY"] = KEY  # read by the job's options and the supervisor
    webhook = (f"alerts: {{webhook: {{url: 'http://127.0.0.1:{hook.server_address[1]}/hook', "
               "secret_env: AUDITPIPE_TEST_WEBHOOK_KEY, retries: 1}}")
    try:
        with running_stack(tmp_path_factory.mktemp("watch"), PORTS, [SERVER], "auditpipe_watch", capped_mb=64,
                           integrity_watch="5s", integrity_full="20s", extra=webhook) as s:
            yield s
    finally:
        hook.shutdown()
        os.environ.pop("AUDITPIPE_TEST_WEBHOOK_KEY", None)


def integrity_row(stack) -> dict:
    return next(r for r in stack.status() if r["component"] == "verification")


def test_changes_to_the_store_raise_integrity_alerts_by_themselves(watched):
    stack = watched
    m = simulate(stack.log_path(SERVER), rate=50, duration=20, speedup=10, seed=31)
    stack.assert_stored_and_counted_exactly_once(SERVER, m)
    db = stack.db()
    events = db[stack.cfg.store["events_collection"]]
    alerts = db[stack.cfg.store["alerts_collection"]]
    stack.wait_for_heads_at(SERVER, m.records, store=False, archive=True, signed=True)
    stack.wait_for("a clean pass that verified every link", lambda: (
        f"{SERVER} to link {m.records}" in (row := integrity_row(stack))["detail"] and row["health"] == "ok", row),
        timeout=60, every=1)
    assert alerts.count_documents({"rule": "integrity"}) == 0

    by_link = sorted(events.find({"server": SERVER}), key=lambda d: d["chain_seq"])
    edited, deleted = by_link[10], by_link[20]
    events.update_one({"_id": edited["_id"]}, {"$set": {"user": "mallory"}})
    events.delete_one({"_id": deleted["_id"]})
    forged = {k: v for k, v in by_link[30].items() if k not in ("_id", "chain_seq", "chain_digest")}
    events.insert_one({**forged, "_id": f"{SERVER}/forged", "sqltext": "GRANT ALL ON *.* TO 'mallory'@'%'"})

    def raised():
        found = list(alerts.find({"rule": "integrity", "server": SERVER}))
        return {kind: [a for a in found if f": {kind}:" in a["summary"]] for kind in ("EDITED", "DELETED", "INSERTED")}

    stack.wait_for("an integrity alert for each change", lambda: (
        all((r := raised()).values()), {k: len(v) for k, v in r.items()}), timeout=90, every=1)
    found = raised()
    assert edited["_id"] in found["EDITED"][0]["summary"]
    assert f"link {deleted['chain_seq']}" in found["DELETED"][0]["summary"]
    assert found["INSERTED"][0]["evidence"] == [f"{SERVER}/forged"]
    for [a] in found.values():
        assert a["severity"] == "critical", a
    on_topic = {a["_id"] for a in stack.topic_messages("alerts") if a.get("rule") == "integrity"}
    assert {a["_id"] for v in found.values() for a in v} <= on_topic, "also outside the store"
    hooked = {}
    for headers, body in posted:
        assert webhook.check_signature(KEY, headers["X-Auditpipe-Signature"], body, time.time(), 3600) is None, headers
        hooked[headers["X-Auditpipe-Alert-Id"]] = json.loads(body)
    assert {a["_id"] for v in found.values() for a in v} <= set(hooked), "and to the webhook, signed"
    row = integrity_row(stack)
    assert row["health"] == "critical" and "3 open finding(s)" in row["detail"], row
    assert stack.cli("status", check=False).returncode == 3
    shown = stack.cli("alerts", "--rule", "integrity", "--from", "1h").stdout
    assert shown.count("critical") >= 3, shown

    # an insider deletes the alerts too: the next full pass raises them again
    alerts.delete_many({"rule": "integrity"})
    stack.wait_for("the alerts raised again", lambda: (
        (n := alerts.count_documents({"rule": "integrity", "server": SERVER})) >= 3, n), timeout=90, every=1)
