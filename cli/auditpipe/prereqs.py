"""Checks for the tools the local stack builds and runs with, with what to do when one is missing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from auditpipe.errors import UserError


def require_java17() -> str:
    java = shutil.which("java")
    if not java:
        raise UserError("no 'java' on PATH: the local stack needs a JDK 17 or newer "
                        "(Debian: apt-get install openjdk-17-jdk-headless)")
    out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    m = re.search(r'version "(\d+)', out)
    if not m or int(m.group(1)) < 17:
        raise UserError(f"'java' is {out.splitlines()[0] if out else 'unknown'}; Kafka 4.2 and Flink 2.2 need "
                        "JDK 17 or newer (Debian: apt-get install openjdk-17-jdk-headless)")
    return java


def require_tool(name: str, install_hint: str) -> str:
    path = shutil.which(name)
    if not path:
        raise UserError(f"no '{name}' on PATH: {install_hint}")
    return path


def require_maven() -> str:
    return require_tool("mvn", "the local stack builds the Flink job and fetches Kafka and Flink from Maven "
                               "Central with Maven (Debian: apt-get install maven)")


def require_go() -> str:
    return require_tool("go", "the local store, FerretDB, is built from the Go module proxy with Go 1.22 or newer "
                              "(https://go.dev/doc/install, or Debian: apt-get install golang)")


def is_root() -> bool:
    return os.geteuid() == 0


def install_debian_packages(commands: dict[str, str], why: str, log) -> list[str]:
    """Installs the Debian packages whose commands (``{command: package}``) are missing, when this
    user can (root with apt-get). Returns the commands still missing afterwards."""
    import shutil

    from auditpipe import progress

    missing = {c: p for c, p in commands.items() if not shutil.which(c)}
    if missing and is_root() and shutil.which("apt-get"):
        env = {"DEBIAN_FRONTEND": "noninteractive"}
        packages = sorted(set(missing.values()))
        with progress.step(f"install {', '.join(packages)} (Debian packages, {why})"):
            progress.run_logged(["apt-get", "update", "-qq"], log, "apt-get update", env=env)
            progress.run_logged(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages], log,
                                f"installing {', '.join(packages)}", env=env)
    return [c for c in commands if not shutil.which(c)]
