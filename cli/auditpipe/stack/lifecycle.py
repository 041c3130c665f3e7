"""The local stack as a whole: setup (install), up (install + start), down, status."""

from __future__ import annotations

import json

from auditpipe import paths, progress
from auditpipe.config import Config, duration_seconds
from auditpipe.stack import supervisor
from auditpipe.stack.components import StatusRow, all_components


def setup(cfg: Config) -> None:
    cfg.tools_dir.mkdir(parents=True, exist_ok=True)
    progress.info(f"setup: installing into {cfg.tools_dir}")
    for c in all_components(cfg):
        c.install()


def up(cfg: Config) -> None:
    """Installs what is missing, starts every part that is not running, then the supervisor.
    Safe to run at any time: running parts are left alone (the lock keeps the supervisor out)."""
    setup(cfg)
    cfg.make_state_dir()
    progress.info(f"up: starting the local stack (state in {cfg.state_dir})")
    with supervisor.stack_lock(cfg):
        for c in all_components(cfg):
            already = c.is_managed() and c.proc.running()
            with progress.step(f"{c.name}: {'already running' if already else 'start'}"):
                c.start()
    with progress.step("supervisor: " + ("already running" if supervisor.process(cfg).running() else "start")):
        supervisor.start(cfg)


def upgrade(cfg: Config) -> None:
    """The running job replaced by the one this checkout builds, from a savepoint of the running one
    (FlinkJob.upgrade, on the MiniCluster or the local cluster); then up. The stack lock keeps the
    supervisor from restarting the job meanwhile."""
    from auditpipe.errors import UserError
    from auditpipe.stack.flink.job import FlinkJob

    # the MiniCluster, or the local cluster's JobManager (FlinkJobManager.upgrade)
    job = next(c for c in all_components(cfg) if isinstance(c, FlinkJob))
    if not (job.is_managed() and job.proc.running() and job.job_state() == "RUNNING"):
        raise UserError(f"the job is not running: `{paths.COMMAND} up` builds the job and starts it from its newest "
                        "checkpoint")
    progress.info("upgrade: the running job stops with a savepoint; the new one starts from it")
    with supervisor.stack_lock(cfg):
        job.upgrade(lambda: setup(cfg))
    up(cfg)


def down(cfg: Config) -> list[str]:
    """Stops the supervisor, then what `up` started, in reverse order; returns what was stopped."""
    stopped = ["supervisor"] if supervisor.stop(cfg) else []
    with supervisor.stack_lock(cfg):
        for c in reversed(all_components(cfg)):
            if c.stop():
                stopped.append(c.name)
    return stopped


def status(cfg: Config) -> list[StatusRow]:
    rows = []
    for c in all_components(cfg):
        row = c.status()
        if c.is_managed():
            note = supervisor.describe(cfg, c.name, running=c.proc.running())
            if note:
                row.detail = f"{row.detail}; {note}" if row.detail else note
        rows.append(row)
    sup = supervisor.process(cfg)
    pid = sup.pid()
    rows.append(StatusRow("supervisor", pid, "-", "ok" if pid else "stopped",
                          "restarts any part that dies" if pid else
                          f"not running: parts that die stay down; run {paths.COMMAND} up"))
    from auditpipe.stack import tiers

    rows.extend(tiers.tier_rows(cfg))  # hot tier and archive: spans and warnings (docs/archive.md)
    from auditpipe.stack.collector import fleet

    rows.append(fleet.servers_row(cfg))  # the sources' servers: counted, the silent ones named
    rows.append(integrity_row(cfg))
    if cfg.data["alerts"].get("cef") is not None:
        rows.append(forward_row(cfg))
    return rows


def forward_row(cfg: Config) -> StatusRow:
    """The CEF forwarder (stack/alerts/forwarder.py): alerts delivered, the last one, a failure since when."""
    from auditpipe.stack.alerts import forwarder
    from auditpipe.terminal import shown

    target = cfg.data["alerts"]["cef"]["target"]
    st = forwarder.ForwardState.load(cfg)
    if st.error:
        return StatusRow("cef forward", None, target, "warning",
                         f"failing since {st.error_since[:19].replace('T', ' ')} UTC: {shown(st.error)} "
                         f"({st.sent} alert(s) delivered before)")
    if not st.sent:
        return StatusRow("cef forward", None, target, "ok", "no alert delivered yet")
    return StatusRow("cef forward", None, target, "ok", f"{st.sent} alert(s) delivered, the last {shown(st.last_alert)} "
                     f"at {st.last_sent_at[:19].replace('T', ' ')} UTC")


def integrity_row(cfg: Config) -> StatusRow:
    """The continuous verification's last pass (stack/verification.py): when, what it found, each server's
    last verified link."""
    from auditpipe.stack import verification
    from auditpipe.terminal import shown

    interval = cfg.data["chain"]["watch_interval"]
    if duration_seconds(interval) == 0:
        return StatusRow("verification", None, "-", "ok", f"off (chain.watch_interval {interval}): run auditpipe verify")
    last = verification.last_pass(cfg)
    if last is None:
        return StatusRow("verification", None, "-", "ok", "no verification pass yet (the supervisor runs one every "
                         f"{cfg.data['chain']['watch_interval']})")
    when = f"last pass {last['started'][:19].replace('T', ' ')} UTC ({last.get('kind', 'full')}, {last['seconds']} s)"
    if last.get("kind") == "incremental" and last.get("full"):
        when += f", last full pass {str(last['full']['started'])[:19].replace('T', ' ')} UTC"
    if last["error"]:
        return StatusRow("verification", None, "-", "warning", f"{when} failed: {shown(last['error'])}")
    links = ", ".join(f"{shown(s)} to link {n}" for s, n in sorted(last["servers"].items()) if n is not None)
    if last["findings"]:
        return StatusRow("verification", None, "-", "critical",
                         f"{when}: {last['findings']} open finding(s), raised as integrity alerts; run auditpipe verify")
    return StatusRow("verification", None, "-", "ok", f"{when}: verified {links or 'nothing yet'}")


def format_status(rows: list[StatusRow], as_json: bool = False) -> str:
    if as_json:
        return json.dumps([r.__dict__ for r in rows], indent=2)
    header = ("COMPONENT", "PID", "ENDPOINT", "HEALTH", "DETAIL")
    table = [header] + [(r.component, str(r.pid or "-"), r.endpoint, r.health, r.detail) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    return "\n".join("  ".join(cell.ljust(widths[i]) if i < 4 else cell for i, cell in enumerate(row))
                     for row in table)
