"""The deployment's files (docker-compose.yml, .env, .env.example, deploy/): loaded by compose-go,
the library `docker compose` uses (deploy/compose-check), and checked against the repository and
the code they run. No Docker engine runs on the build machines, so no container is started here:
what this proves is that compose accepts the file, every file it mounts or builds from exists,
the wiring between services agrees, and `auditpipe init` makes the job's options from the
deployment's configuration. The job validates those options in tests/e2e/deployment/test_deployment_job_options.py."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers import compose_project
from helpers.compose_project import DEPLOY_CONFIG, ENV, SECRETS_EXAMPLE, build_compose_check, env_file, load

from auditpipe import config, paths
from auditpipe.errors import UserError
from auditpipe.stack import deployment
from auditpipe.stack.flink.job import FlinkJob

# run to completion; nothing waits for them to be healthy
ONE_SHOT = {"init", "direct-init", "audit-log-dir", "load", "cli", "review"}
OUTPUT_MOUNTS = {"/reports"}  # written by a service: compose creates the host directory


@pytest.fixture(scope="session")
def compose_check(tmp_path_factory) -> Path:
    return build_compose_check(tmp_path_factory.mktemp("compose-check"))


@pytest.fixture(scope="session")
def project(compose_check) -> dict:
    return compose_project.project(compose_check, "demo", "tools", "direct", "siem")


def test_compose_accepts_the_file_with_each_profile(compose_check):
    for profiles in [(), ("demo",), ("tools",), ("direct",), ("siem",)]:
        r = load(compose_check, *profiles)
        assert r.returncode == 0, (profiles, r.stderr)
    services = set(json.loads(load(compose_check).stdout)["services"])
    assert services == {"kafka", "mongodb", "init", "jobmanager", "taskmanager", "fluentd", "grafana", "verifier"}


def test_without_the_passwords_compose_refuses_naming_each(compose_check):
    r = load(compose_check, "demo", secrets=False)
    assert r.returncode != 0
    for name in env_file(SECRETS_EXAMPLE):
        assert f"required variable {name} is missing a value" in r.stderr, name
    assert not set(env_file(SECRETS_EXAMPLE)) & set(env_file(ENV)), "a password in the committed .env"
    assert all(v.startswith(deployment.PLACEHOLDER) for v in env_file(SECRETS_EXAMPLE).values())


def test_every_mounted_file_and_build_context_exists(project):
    for name, s in project["services"].items():
        for v in s.get("volumes", []):
            if v["type"] == "bind":
                source = Path(v["source"])
                assert source.is_relative_to(paths.REPO), f"{name}: {source}"
                assert source.exists() or v["target"] in OUTPUT_MOUNTS, f"{name}: {source}"
            else:
                assert v["source"] in project["volumes"], f"{name}: volume {v['source']} is not declared"
        if "build" in s:
            context = Path(s["build"]["context"])
            assert (context / s["build"].get("dockerfile", "Dockerfile")).is_file(), name


def test_health_and_start_order(project):
    services = project["services"]
    for name, s in services.items():
        if name not in ONE_SHOT:
            assert s.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
        for dep, how in s.get("depends_on", {}).items():
            assert dep in services, (name, dep)
            wanted = "service_completed_successfully" if dep in ONE_SHOT else "service_healthy"
            assert how["condition"] == wanted, (name, dep, how)
    # the job starts only after init made the topics, collections and its options
    assert services["jobmanager"]["depends_on"]["init"]["condition"] == "service_completed_successfully"
    assert services["fluentd"]["depends_on"]["init"]["condition"] == "service_completed_successfully"
    assert services["fluentd-direct"]["depends_on"]["direct-init"]["condition"] == "service_completed_successfully"


def test_state_that_must_survive_a_restart_is_on_named_volumes(project):
    s = project["services"]

    def volume_at(service: str, target: str) -> str | None:
        return next((v["source"] for v in s[service]["volumes"] if v["target"] == target and v["type"] == "volume"), None)

    assert volume_at("kafka", s["kafka"]["environment"]["KAFKA_LOG_DIRS"])
    assert volume_at("mongodb", "/data/db")
    assert volume_at("fluentd", s["fluentd"]["environment"]["AUDITPIPE_STATE_DIR"])
    assert volume_at("grafana", "/var/lib/grafana")
    checkpoints = yaml.safe_load(s["jobmanager"]["environment"]["FLINK_PROPERTIES"])["execution.checkpointing.dir"]
    assert checkpoints == "file:///flink/checkpoints"
    for flink in ("jobmanager", "taskmanager"):
        assert volume_at(flink, "/flink/checkpoints") == "flink-checkpoints"
        assert volume_at(flink, "/flink/archive") == "archive"


def test_ports_are_published_on_loopback_only(project):
    for name, s in project["services"].items():
        for p in s.get("ports", []):
            assert p.get("host_ip") == "127.0.0.1", (name, p)


def test_the_services_agree_on_kafka_the_store_and_the_job_options(project):
    s = project["services"]
    deploy_cfg = yaml.safe_load(DEPLOY_CONFIG.read_text())
    bootstrap = deploy_cfg["kafka"]["bootstrap_servers"]
    assert f"INTERNAL://{bootstrap}" in s["kafka"]["environment"]["KAFKA_ADVERTISED_LISTENERS"].split(",")
    assert s["fluentd"]["environment"]["AUDITPIPE_KAFKA_BROKERS"] == bootstrap
    # init reads the deployment's config where compose mounts it, and writes the options where the JobManager reads them
    command = s["init"]["command"]
    mounted = {v["target"]: v for v in s["init"]["volumes"]}
    assert Path(mounted[command[command.index("--config") + 1]]["source"]) == DEPLOY_CONFIG
    job_properties = command[command.index("--job-properties") + 1]
    job_dir = str(Path(job_properties).parent)
    assert mounted[job_dir]["source"] == "job-config"
    # the Flink services mount it elsewhere, and their entry copies it to job_dir for Flink's user
    flink_entry = (paths.REPO / "deploy" / "docker" / "auditpipe-flink-entry").read_text()
    assert f'TO="${{AUDITPIPE_JOB_CONFIG:-{job_dir}}}"' in flink_entry
    copied_from = re.search(r'FROM="\$\{AUDITPIPE_JOB_CONFIG_MOUNT:-([^}]+)\}"', flink_entry).group(1)
    for flink in ("jobmanager", "taskmanager"):
        mounts = {v["target"]: v for v in s[flink]["volumes"]}
        assert mounts[copied_from]["source"] == "job-config" and mounts[copied_from].get("read_only"), flink
        assert s[flink]["entrypoint"][0] == "/opt/auditpipe/auditpipe-flink-entry", flink
    entrypoint = (paths.REPO / "deploy" / "docker" / "auditpipe-jobmanager").read_text()
    assert f'PROPERTIES="${{AUDITPIPE_JOB_PROPERTIES:-{job_properties}}}"' in entrypoint
    # the heads' signing key beside the options; its public half where the cli and the verifier read it
    cfg = config.load(DEPLOY_CONFIG)
    assert str(cfg.signing_key_file.parent) == job_dir
    public_dir = str(cfg.public_key_file.parent)
    assert mounted[public_dir]["source"] == "chain-public" and not mounted[public_dir].get("read_only")
    for reader_service in ("cli", "verifier"):
        mounts = {v["target"]: v for v in s[reader_service]["volumes"]}
        assert mounts[public_dir]["source"] == "chain-public" and mounts[public_dir].get("read_only"), reader_service
        assert mounts[str(cfg.archive_path)]["source"] == "archive" and mounts[str(cfg.archive_path)].get("read_only")
    assert s["verifier"]["command"][-2:] == ["verify", "--watch"]
    from auditpipe.stack import verification
    assert str(verification.state_file(cfg)) in s["verifier"]["healthcheck"]["test"][-1]
    assert s["verifier"]["environment"][deploy_cfg["store"]["uri_env"]].startswith(
        f"mongodb://{s['init']['environment']['AUDITPIPE_VERIFIER_STORE_USER']}:"), "the verifier's own store user"
    assert s["init"]["environment"][deploy_cfg["store"]["uri_env"]].startswith("mongodb://")
    assert s["cli"]["environment"][deploy_cfg["store"]["uri_env"]].startswith(
        f"mongodb://{s['init']['environment']['AUDITPIPE_READER_STORE_USER']}:")


def test_kafka_knows_every_user_the_config_names_and_each_part_connects_as_its_own(project):
    """The broker's PLAIN JAAS line (every listener) holds the administrator alone, with the password
    init and the healthcheck are given; each principal of deploy/compose/auditpipe.yaml is a SCRAM
    user, the mechanism on both client listeners, its credentials set by init, which is given its
    password, as is the service that connects as it; the authorizer is on with the administrator as
    its only super user; Fluentd connects as the collector."""
    s = project["services"]
    cfg = config.load(DEPLOY_CONFIG)
    sec = cfg.kafka["security"]
    kafka = s["kafka"]["environment"]
    assert set(kafka["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(",")) == {
        "CONTROLLER:SASL_PLAINTEXT", "INTERNAL:SASL_PLAINTEXT", "HOST:SASL_PLAINTEXT"}
    assert kafka["KAFKA_SUPER_USERS"] == f"User:{sec['username']}"
    assert kafka["KAFKA_ALLOW_EVERYONE_IF_NO_ACL_FOUND"] == "false"
    assert "StandardAuthorizer" in kafka["KAFKA_AUTHORIZER_CLASS_NAME"]
    secrets = env_file(SECRETS_EXAMPLE)
    for listener in ("CONTROLLER", "INTERNAL", "HOST"):
        jaas = kafka[f"KAFKA_LISTENER_NAME_{listener}_PLAIN_SASL_JAAS_CONFIG"]
        assert f'username="{sec["username"]}" password="{secrets[sec["password_env"]]}"' in jaas
        assert re.findall(r"user_(\S+)=", jaas) == [sec["username"]], "PLAIN knows the administrator alone"
    assert kafka["KAFKA_SASL_ENABLED_MECHANISMS"].split(",") == ["PLAIN", "SCRAM-SHA-512"]
    assert kafka["KAFKA_LISTENER_NAME_CONTROLLER_SASL_ENABLED_MECHANISMS"] == "PLAIN"
    assert set(sec["principals"]) == {"collector", "job", "forwarder", "verifier"}
    for part in sec["principals"]:
        assert cfg.kafka_mechanism(part) == "SCRAM-SHA-512", part
        assert s["init"]["environment"][cfg.kafka_principal(part)[1]] == secrets[cfg.kafka_principal(part)[1]]
    for listener in ("INTERNAL", "HOST"):  # the image's names: "___" is "-"
        assert kafka[f"KAFKA_LISTENER_NAME_{listener}_SCRAM___SHA___512_SASL_JAAS_CONFIG"] == \
            "org.apache.kafka.common.security.scram.ScramLoginModule required;"
    fluentd = s["fluentd"]["environment"]
    assert fluentd["AUDITPIPE_KAFKA_SASL_MECHANISM"] == cfg.kafka_mechanism("collector")
    assert (fluentd["AUDITPIPE_KAFKA_USERNAME"], fluentd["AUDITPIPE_KAFKA_PASSWORD"]) == (
        sec["principals"]["collector"]["username"], secrets[sec["principals"]["collector"]["password_env"]])
    assert fluentd["AUDITPIPE_KAFKA_SECURITY_PROTOCOL"] == sec["protocol"]
    verifier_password = sec["principals"]["verifier"]["password_env"]
    assert s["init"]["environment"][verifier_password] == secrets[verifier_password]
    assert set(s["verifier"]["environment"]) == {verifier_password, cfg.store["uri_env"]}, \
        "the verifier publishes its alerts as itself alone, and reads the store as itself"
    forwarder_password = sec["principals"]["forwarder"]["password_env"]
    assert set(s["forward"]["environment"]) == {forwarder_password}, "the forwarder reads alerts as itself alone"
    assert s["forward"]["command"][-1] == "forward"


def test_fluentd_is_built_from_the_tested_collector(project):
    build = project["services"]["fluentd"]["build"]
    assert Path(build["context"]) == paths.COLLECTORS / "fluentd"
    dockerfile = (paths.COLLECTORS / "fluentd" / "Dockerfile").read_text()
    # the files tests/e2e/collector/test_fluentd.py runs, the syslog receiver's source included
    assert "COPY fluent.conf run syslog-source.conf permitted-peers.rb /fluentd/etc/" in dockerfile
    # the direct path: the files tests/e2e/collector/test_fluentd_direct.py runs, in mongo mode
    direct = project["services"]["fluentd-direct"]
    assert Path(direct["build"]["context"]) == paths.COLLECTORS / "fluentd"
    dockerfile = (paths.COLLECTORS / "fluentd" / direct["build"]["dockerfile"]).read_text()
    assert "COPY fluent.conf mongo-direct.conf run /fluentd/etc/" in dockerfile
    assert "COPY plugins /fluentd/etc/plugins" in dockerfile and "AUDITPIPE_OUTPUT=mongo" in dockerfile
    assert "fluent-plugin-mongo -v '1.6.3'" in dockerfile  # the version ../shared/fluentd installs for the test
    assert direct["environment"]["AUDITPIPE_MONGO_URI"].startswith("mongodb://")
    assert set(direct["depends_on"]) == {"mongodb", "direct-init"}  # no Kafka, no Flink
    assert set(project["services"]["direct-init"]["depends_on"]) == {"mongodb"}


def test_grafana_gets_the_provisioning_and_every_variable_it_names(project):
    g = project["services"]["grafana"]
    mounts = {v["target"]: Path(v["source"]) for v in g["volumes"] if v["type"] == "bind"}
    assert mounts["/etc/grafana/provisioning/datasources"] == paths.REPO / "dashboards" / "provisioning" / "datasources"
    provider = yaml.safe_load((paths.REPO / "dashboards/provisioning/dashboards/auditpipe.yaml").read_text())
    assert mounts[provider["providers"][0]["options"]["path"]] == paths.REPO / "dashboards" / "grafana"
    datasource = (paths.REPO / "dashboards/provisioning/datasources/auditpipe-store.yaml").read_text()
    for name in re.findall(r"\$\{(\w+)\}", datasource):
        assert g["environment"].get(name), name
    assert g["environment"]["AUDITPIPE_GRAFANA_STORE_USER"] == project["services"]["init"]["environment"][
        "AUDITPIPE_READER_STORE_USER"]
    # the plugin at the version .env pins, from its release (its documentation's way), allowed unsigned by name
    version = env_file(ENV)["GRAFANA_MONGODB_PLUGIN_VERSION"]
    url, _, plugin_id = g["environment"]["GF_INSTALL_PLUGINS"].partition(";")
    assert plugin_id == "haohanyang-mongodb-datasource" == g["environment"]["GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS"]
    assert url == (f"https://github.com/haohanyang/mongodb-datasource/releases/download/v{version}/"
                   f"haohanyang-mongodb-datasource-{version}.zip")
    assert f"`haohanyang-mongodb-datasource` {version}" in (paths.REPO / "docs" / "dashboards.md").read_text()


def test_init_writes_job_options_with_the_jobs_own_store_user(tmp_path, monkeypatch, project):
    init_env = project["services"]["init"]["environment"]
    for key, value in init_env.items():
        monkeypatch.setenv(key, value)
    cfg = config.load(DEPLOY_CONFIG)
    target = deployment.cluster_target(cfg, "file:///flink/checkpoints", "file:///flink/archive")
    out = deployment.write_job_properties(cfg, tmp_path / "job.properties", target)
    assert out.stat().st_mode & 0o077 == 0
    props = dict(line.split("=", 1) for line in out.read_text().splitlines())
    assert props["kafka.bootstrap-servers"] == cfg.kafka_bootstrap
    uri = props["store.uri"].replace("\\:", ":").replace("\\=", "=")
    assert uri.startswith(f"mongodb://{init_env['AUDITPIPE_JOB_STORE_USER']}:{init_env['AUDITPIPE_JOB_STORE_PASSWORD']}@mongodb:27017/")
    assert "authSource=admin" in uri and "root" not in uri
    assert props["chain.signing-key-file"] == str(cfg.signing_key_file)  # init makes it: the job signs its heads
    assert props["flink.execution.checkpointing.dir"].replace("\\:", ":") == "file:///flink/checkpoints"
    assert props["archive.path"].replace("\\:", ":") == "file:///flink/archive"
    assert not [k for k in props if k.startswith("flink.rest.")]
    # the same entries as the local job's, but for the cluster's (its key pair made here, not in /etc)
    cfg.data["chain"] = {**cfg.data["chain"], "signing_key_file": str(tmp_path / "keys" / "chain-signing.pem"),
                         "public_key_file": str(tmp_path / "keys" / "chain-signing.pub")}
    local = FlinkJob(cfg).job_properties(None)
    local_keys = {line.split("=", 1)[0] for line in local.splitlines()}
    local_only = local_keys - set(props)
    assert {"flink.rest.address", "flink.rest.bind-address", "flink.rest.port", "flink.jobmanager.bind-host",
            "flink.web.submit.enable", "flink.security.ssl.rest.enabled",
            "flink.security.ssl.rest.authentication-enabled"} <= local_only
    # the MiniCluster's endpoints and their mutual TLS (stack/flink/flink_rest.py), its managed memory (RocksDB's)
    # and working folder, nothing else
    assert all(k.startswith(("flink.rest.", "flink.web.", "flink.security.ssl.", "flink.jobmanager.bind-host",
                             "flink.taskmanager.bind-host", "flink.taskmanager.host")) or k in (
                   "flink.taskmanager.memory.managed.size", "flink.io.tmp.dirs") for k in local_only), local_only
    assert props["flink.state.backend.type"] == "rocksdb" and props["flink.execution.checkpointing.incremental"] == "true"
    assert props["flink.state.backend.rocksdb.compaction.style"] == "UNIVERSAL"
    factory = props["flink.state.backend.rocksdb.options-factory"]
    assert (paths.REPO / "pipelines" / "flink-job" / "src" / "main" / "java" / (factory.replace(".", "/") + ".java")).is_file(), \
        "the options factory is the job's own class"


def test_store_users_come_in_pairs(monkeypatch):
    monkeypatch.setenv("AUDITPIPE_JOB_STORE_USER", "job")
    monkeypatch.delenv("AUDITPIPE_JOB_STORE_PASSWORD", raising=False)
    with pytest.raises(UserError, match="AUDITPIPE_JOB_STORE_PASSWORD is not set"):
        deployment.credentials(deployment.STORE_USERS["job"])
    assert deployment.with_user("mongodb://root:pw@mongodb:27017/?authSource=admin&tls=false", "j@b", "p:w/") == \
        "mongodb://j%40b:p%3Aw%2F@mongodb:27017/?tls=false&authSource=admin"


def test_init_refuses_the_placeholder_passwords_naming_each(monkeypatch, tmp_path, project):
    from auditpipe import config

    f = tmp_path / "auditpipe.yaml"
    f.write_text("kafka: {bootstrap_servers: 'kafka:9092'}\nstore: {uri_env: AUDITPIPE_STORE_URI}\n")
    monkeypatch.setenv("AUDITPIPE_STORE_URI", "mongodb://root:replace-me-mongodb-root@mongodb:27017/?authSource=admin")
    for name, value in env_file(SECRETS_EXAMPLE).items():
        monkeypatch.setenv(name, value)
    with pytest.raises(UserError) as e:
        deployment.init(config.load(f), None, "file:///c", "file:///a", wait_seconds=0.1)
    said = str(e.value)
    store_passwords = [u.password_env for u in deployment.STORE_USERS.values()]
    assert "AUDITPIPE_VERIFIER_STORE_PASSWORD" in store_passwords
    for name in ("MONGO_ROOT_PASSWORD", *store_passwords, "GRAFANA_ADMIN_PASSWORD"):
        assert name in said, said
    deploy = config.load(DEPLOY_CONFIG)
    with pytest.raises(UserError) as e:
        deployment.refuse_placeholders(deploy)
    for name in ("AUDITPIPE_KAFKA_ADMIN_PASSWORD", "AUDITPIPE_KAFKA_COLLECTOR_PASSWORD", "AUDITPIPE_KAFKA_JOB_PASSWORD",
                 "AUDITPIPE_KAFKA_FORWARDER_PASSWORD", "AUDITPIPE_KAFKA_VERIFIER_PASSWORD"):
        assert name in str(e.value) and name in project["services"]["init"]["environment"], name
    init_env = project["services"]["init"]["environment"]
    assert {"GRAFANA_ADMIN_PASSWORD", *deployment.OTHER_PASSWORDS} <= set(init_env), "init sees what it checks"
    for name in (*store_passwords, "GRAFANA_ADMIN_PASSWORD"):
        monkeypatch.setenv(name, "a password of my own")
    monkeypatch.setenv("AUDITPIPE_STORE_URI", "mongodb://root:mine@mongodb:27017/?authSource=admin")
    deployment.refuse_placeholders(config.load(f))  # nothing left to refuse


def test_init_refuses_the_local_stack(tmp_path):
    (tmp_path / "auditpipe.yaml").write_text("")
    r = subprocess.run([str(paths.REPO / "auditpipe"), "--config", str(tmp_path / "auditpipe.yaml"), "init"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "init prepares a Kafka and a store that auditpipe does not run" in r.stderr


def test_init_makes_the_clusters_tls_identity_once_and_8081_is_not_published(tmp_path, project):
    """The deployment's Flink: REST with mutual TLS, the JobManager's and TaskManagers' own connections
    too (internal SSL, as the local cluster runs it: tests/e2e/job/test_flink_cluster.py), with an identity
    init makes in the job-config volume; the REST port is published nowhere."""
    cfg = config.load(DEPLOY_CONFIG)
    cfg.data["chain"] = {**cfg.data["chain"], "signing_key_file": str(tmp_path / "job" / "chain-signing.pem")}
    assert deployment.make_flink_tls(cfg)
    settings_file = tmp_path / "job" / deployment.FLINK_TLS_SETTINGS
    settings = yaml.safe_load(settings_file.read_text())
    for scope in ("rest", "internal"):
        assert settings[f"security.ssl.{scope}.enabled"] == "true"
        keystore = Path(settings[f"security.ssl.{scope}.keystore"])
        assert keystore.parent == tmp_path / "job" and keystore.is_file(), "a file the Flink entry copies"
        assert settings[f"security.ssl.{scope}.truststore"] == str(keystore)
    assert settings["security.ssl.rest.authentication-enabled"] == "true"
    assert {p.stat().st_mode & 0o777 for p in (settings_file, keystore)} == {0o600}
    before = settings_file.read_text()
    assert not deployment.make_flink_tls(cfg) and settings_file.read_text() == before, "kept"
    for name in ("jobmanager", "taskmanager"):
        assert not project["services"][name].get("ports"), f"{name} publishes nothing"


def test_the_flink_entry_gives_the_job_config_to_flinks_user_alone(tmp_path):
    """auditpipe-flink-entry copies the job-config volume's files (written by init as its own user) for
    the user Flink runs as, 0600 in a 0700 folder, then runs the command."""
    import getpass
    import os

    mount, to = tmp_path / "job-init", tmp_path / "job"
    mount.mkdir()
    for name in ("job.properties", "chain-signing.pem", deployment.FLINK_TLS_SETTINGS):
        (mount / name).write_text(name)
        (mount / name).chmod(0o600)
    env = {**os.environ, "AUDITPIPE_JOB_CONFIG_MOUNT": str(mount), "AUDITPIPE_JOB_CONFIG": str(to),
           "AUDITPIPE_FLINK_USER": getpass.getuser()}
    entry = str(paths.REPO / "deploy" / "docker" / "auditpipe-flink-entry")
    r = subprocess.run([entry, "cat", str(to / "job.properties")], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout == "job.properties", r.stderr
    assert to.stat().st_mode & 0o777 == 0o700
    assert {p.name: p.stat().st_mode & 0o777 for p in to.iterdir()} == {
        "job.properties": 0o600, "chain-signing.pem": 0o600, deployment.FLINK_TLS_SETTINGS: 0o600}
    # the cluster's TLS settings join FLINK_PROPERTIES, after the compose file's
    r = subprocess.run([entry, "sh", "-c", 'printf %s "$FLINK_PROPERTIES"'], env={**env, "FLINK_PROPERTIES": "a: 1"},
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout == f"a: 1\n{deployment.FLINK_TLS_SETTINGS}", (r.stdout, r.stderr)
    (mount / deployment.FLINK_TLS_SETTINGS).unlink()
    (to / deployment.FLINK_TLS_SETTINGS).unlink()
    r = subprocess.run([entry, "true"], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "flink-tls.yaml is missing: run init" in r.stderr, "no Flink without its TLS"
    # without the volume it says where it belongs and runs nothing
    r = subprocess.run([entry, "true"], env={**env, "AUDITPIPE_JOB_CONFIG_MOUNT": str(tmp_path / "none")},
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "mount the job-config volume there" in r.stderr


def test_the_job_image_is_built_from_the_release_s_job_jar_or_not_at_all(tmp_path, project):
    """The job image's build passes .env's AUDITPIPE_JOB_JAR_SHA256 to deploy/docker/check-job-jar, which
    prints the built jar's digest and, where one is given, refuses other bytes naming both."""
    import hashlib

    build = project["services"]["jobmanager"]["build"]
    assert build["args"]["AUDITPIPE_JOB_JAR_SHA256"] == env_file(ENV)["AUDITPIPE_JOB_JAR_SHA256"]
    dockerfile = (Path(build["context"]) / build["dockerfile"]).read_text()
    assert re.search(r'check-job-jar \S+/auditpipe-flink-job\.jar "\$AUDITPIPE_JOB_JAR_SHA256"', dockerfile)
    jar = tmp_path / "auditpipe-flink-job.jar"
    jar.write_bytes(b"PK the job")
    digest = hashlib.sha256(jar.read_bytes()).hexdigest()
    check = str(paths.REPO / "deploy" / "docker" / "check-job-jar")
    for given in ("", digest, digest.upper()):
        r = subprocess.run([check, str(jar), given], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0 and r.stdout == f"auditpipe job jar: sha256 {digest}\n", r.stderr
    other = "0" * 64
    r = subprocess.run([check, str(jar), other], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and digest in r.stderr and other in r.stderr, r.stderr


def test_each_writable_volume_is_mounted_on_a_folder_its_image_gives_its_user(project):
    """A new named volume takes the owner of the image's folder it is mounted on (root when the image
    has none): the CLI image (uid 10001) and Flink (user flink) write to theirs only because their
    Dockerfiles create those folders for them."""
    images = {"auditpipe-cli": ("auditpipe-cli.Dockerfile", "auditpipe:auditpipe"),
              "auditpipe-flink-job": ("flink-job.Dockerfile", "flink:flink")}
    checked = 0
    for name, s in project["services"].items():
        image = s.get("image", "").split(":")[0]
        if image not in images:
            continue
        dockerfile, owner = images[image]
        text = (paths.REPO / "deploy" / "docker" / dockerfile).read_text().replace("\\\n", " ")
        chowned = {p for line in text.splitlines() if line.startswith("RUN") and f"chown {owner}" in line
                   for p in re.findall(r"\s(/[\w/.-]+)", line.split(f"chown {owner}", 1)[1])}
        for v in s.get("volumes", []):
            if v["type"] == "volume" and not v.get("read_only"):
                assert v["target"] in chowned, f"{name}: {v['target']} is not created for {owner} in {dockerfile}"
                checked += 1
    assert checked >= 6


def test_init_makes_the_signing_key_once(tmp_path, monkeypatch):
    cfg = config.load(DEPLOY_CONFIG)
    cfg.data["chain"] = {**cfg.data["chain"], "signing_key_file": str(tmp_path / "job" / "chain-signing.pem"),
                         "public_key_file": str(tmp_path / "chain-signing.pub")}
    assert deployment.make_signing_key(cfg)
    key = cfg.signing_key_file.read_bytes()
    assert cfg.signing_key_file.stat().st_mode & 0o777 == 0o600 and b"PRIVATE KEY" in key
    assert b"PRIVATE" not in cfg.public_key_file.read_bytes()
    assert not deployment.make_signing_key(cfg) and cfg.signing_key_file.read_bytes() == key  # kept


def test_the_jobs_store_role_cannot_change_or_remove_what_it_stored(monkeypatch):
    """The role init gives the job's user: read; insert into every collection the job writes; update
    only where it upserts counts, the servers list, sessions and baselines; remove nowhere (docs/security.md)."""
    for name in ("AUDITPIPE_PROFILES_STORE_USER", "AUDITPIPE_PROFILES_STORE_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    cfg = config.load(DEPLOY_CONFIG)
    role = deployment.job_role(cfg)
    actions = {p["resource"]["collection"]: set(p["actions"]) for p in role["privileges"]}
    assert all(p["resource"]["db"] == cfg.store["database"] for p in role["privileges"])
    s = cfg.store
    for key in ("events_collection", "evidence_collection", "alerts_collection", "chain_heads_collection",
                "dead_letter_collection", "kafka_lag_collection"):
        assert actions.pop(s[key]) == {"insert"}, key
    for key in ("stats_collection", "stats_hourly_collection", "rollups_collection", "servers_collection",
                "sessions_collection", "baselines_collection"):
        assert actions.pop(s[key]) == {"insert", "update"}, key
    assert actions == {}, "a collection the job writes that the role does not say"
    assert role["roles"] == [{"role": "read", "db": cfg.store["database"]}]
    from auditpipe import contract

    collection_options = [o for o in contract.option_keys() if o.startswith("store.collection.")]
    assert len(collection_options) == len(role["privileges"]), "every collection option of the job"


def test_sessions_and_baselines_are_written_by_a_user_who_cannot_touch_an_event(tmp_path, monkeypatch, project):
    """With the profiles user in the environment (compose gives it), the job writes sessions and baselines
    as that user, whose role reaches those two collections and the dead letters alone, and the job's own
    role no longer updates either."""
    for key, value in project["services"]["init"]["environment"].items():
        monkeypatch.setenv(key, value)
    cfg = config.load(DEPLOY_CONFIG)
    s = cfg.store
    role = deployment.profiles_role(cfg)
    actions = {p["resource"]["collection"]: set(p["actions"]) for p in role["privileges"]}
    assert actions == {s["sessions_collection"]: {"find", "insert", "update"},
                       s["baselines_collection"]: {"find", "insert", "update"},
                       s["dead_letter_collection"]: {"insert"}}
    assert role["roles"] == [] and all(p["resource"]["db"] == s["database"] for p in role["privileges"])
    job = {p["resource"]["collection"] for p in deployment.job_role(cfg)["privileges"]}
    assert s["events_collection"] in job and not job & {s["sessions_collection"], s["baselines_collection"]}
    assert deployment.STORE_USERS["profiles"].role in deployment.CUSTOM_ROLES
    target = deployment.cluster_target(cfg, "file:///flink/checkpoints", "file:///flink/archive")
    props = dict(line.split("=", 1) for line in
                 deployment.write_job_properties(cfg, tmp_path / "job.properties", target).read_text().splitlines())
    env = project["services"]["init"]["environment"]
    uri = props["store.profiles-uri"].replace("\\:", ":").replace("\\=", "=")
    assert uri.startswith(f"mongodb://{env['AUDITPIPE_PROFILES_STORE_USER']}:{env['AUDITPIPE_PROFILES_STORE_PASSWORD']}@")
    assert props["store.uri"] != props["store.profiles-uri"]


def test_the_verifier_reads_and_inserts_its_alerts_and_can_change_nothing_it_verifies(project):
    """The verifier's user (init makes it): read; insert integrity alerts, never change or remove one;
    keep the review queue (its deadline check). Its Kafka user may only write the alerts topic."""
    cfg = config.load(DEPLOY_CONFIG)
    role = deployment.verifier_role(cfg)
    actions = {p["resource"]["collection"]: set(p["actions"]) for p in role["privileges"]}
    assert actions == {cfg.store["alerts_collection"]: {"insert"},
                       cfg.store["review_queue_collection"]: {"insert", "update", "remove"}}
    assert role["roles"] == [{"role": "read", "db": cfg.store["database"]}]
    assert deployment.STORE_USERS["verifier"].role in deployment.CUSTOM_ROLES
    from auditpipe.stack.components import kafka_grants
    from auditpipe.stack.kafka import kafka_acls, topics

    user = f"User:{cfg.kafka['security']['principals']['verifier']['username']}"
    assert {(kind, name, op) for who, kind, name, op in kafka_acls.wanted(cfg, kafka_grants()) if who == user} == {
        ("TOPIC", topics.topic_name("alerts"), op) for op in kafka_acls.PRODUCE}


def test_a_reviewer_inserts_decisions_and_can_change_or_remove_none(project):
    """The review service's user (init makes it): read; insert decisions, never update or remove one; remove
    a decided day from the review queue. It writes the decisions' second copy to a volume only it writes."""
    cfg = config.load(DEPLOY_CONFIG)
    role = deployment.reviewer_role(cfg)
    actions = {p["resource"]["collection"]: set(p["actions"]) for p in role["privileges"]}
    assert actions == {cfg.store["reviews_collection"]: {"insert"}, cfg.store["review_queue_collection"]: {"remove"}}
    assert role["roles"] == [{"role": "read", "db": cfg.store["database"]}]
    assert deployment.STORE_USERS["reviewer"].role in deployment.CUSTOM_ROLES
    s = project["services"]
    assert s["review"]["environment"]["AUDITPIPE_STORE_URI"].startswith(
        f"mongodb://{s['init']['environment']['AUDITPIPE_REVIEWER_STORE_USER']}:")
    ledger = str(cfg.review_ledger_file.parent)
    mounts = {name: {v["target"]: v.get("read_only", False) for v in s[name]["volumes"]}
              for name in ("review", "cli", "verifier")}
    assert mounts["review"][ledger] is False and mounts["cli"][ledger] is True, mounts
    # the enrolled reviewers' keys: a file on the host, read-only wherever decisions are made or judged; the
    # reviewer's private key is given on standard input, never kept in the image or a volume
    reviewers = str(cfg.reviewers_file)
    assert all(mounts[name][reviewers] is True for name in mounts), mounts
    sources = {v["source"] for name in mounts for v in s[name]["volumes"] if v["target"] == reviewers}
    assert len(sources) == 1 and (paths.REPO / "deploy/compose/reviewers").is_file(), sources
    assert "--key -" in (paths.REPO / "docker-compose.yml").read_text()


def test_the_direct_path_inserts_as_its_own_user_who_can_change_nothing(project):
    """fluentd-direct connects as the user direct-init makes (never the administrator), whose role
    lists the collections and creates and inserts into the two the direct path writes: the store's
    events and dead letters, the same names in the config and in Fluentd's environment."""
    cfg = config.load(DEPLOY_CONFIG)
    s = project["services"]
    fluentd = s["fluentd-direct"]["environment"]
    assert fluentd["AUDITPIPE_MONGO_COLLECTION"] == cfg.store["events_collection"]
    assert fluentd["AUDITPIPE_MONGO_DEAD_LETTERS"] == cfg.store["dead_letter_collection"]
    init_env = s["direct-init"]["environment"]
    user, password = init_env["AUDITPIPE_DIRECT_STORE_USER"], init_env["AUDITPIPE_DIRECT_STORE_PASSWORD"]
    assert user and fluentd["AUDITPIPE_MONGO_URI"].startswith(f"mongodb://{user}:{password}@mongodb:27017/")
    assert "root" not in fluentd["AUDITPIPE_MONGO_URI"]
    assert "init" in s["direct-init"]["command"] and "--store-users-only" in s["direct-init"]["command"]
    assert init_env["AUDITPIPE_STORE_URI"].startswith(f"mongodb://{s['mongodb']['environment']['MONGO_INITDB_ROOT_USERNAME']}:")
    role = deployment.direct_role(cfg)
    database = cfg.store["database"]
    actions = {p["resource"]["collection"]: set(p["actions"]) for p in role["privileges"]}
    assert all(p["resource"]["db"] == database for p in role["privileges"])
    assert actions == {"": {"listCollections"},
                       cfg.store["events_collection"]: {"createCollection", "insert"},
                       cfg.store["dead_letter_collection"]: {"createCollection", "insert"}}
    assert role["roles"] == []
    assert deployment.STORE_USERS["direct"].role in deployment.CUSTOM_ROLES


def test_init_with_store_users_only_needs_no_kafka(tmp_path, monkeypatch):
    """The direct path's init refuses the placeholder password, then waits for the store alone: the
    Kafka the config names (nothing listens there) is never asked for."""
    from auditpipe.errors import ComponentError

    f = tmp_path / "auditpipe.yaml"
    f.write_text("kafka: {bootstrap_servers: '127.0.0.1:1'}\nstore: {uri_env: AUDITPIPE_STORE_URI}\n")
    monkeypatch.setenv("AUDITPIPE_STORE_URI", "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200")
    monkeypatch.setenv("AUDITPIPE_DIRECT_STORE_USER", "direct")
    monkeypatch.setenv("AUDITPIPE_DIRECT_STORE_PASSWORD", "replace-me-direct")
    with pytest.raises(UserError, match="AUDITPIPE_DIRECT_STORE_PASSWORD"):
        deployment.init(config.load(f), None, "file:///c", "file:///a", wait_seconds=0.1, store_users_only=True)
    monkeypatch.setenv("AUDITPIPE_DIRECT_STORE_PASSWORD", "mine")
    with pytest.raises(ComponentError, match="timed out after .* waiting for the store at"):
        deployment.init(config.load(f), None, "file:///c", "file:///a", wait_seconds=0.5, store_users_only=True)


def test_the_jobmanager_goes_on_on_the_state_backend_that_wrote_its_checkpoints(tmp_path):
    """deploy/docker/auditpipe-jobmanager with Flink's entrypoint replaced by one that prints what it is
    given: the configured backend for a first start, the heap's for checkpoints without a marker (every
    job before RocksDB), the marker's otherwise; the marker written beside the checkpoints; the job told
    which snapshot it resumes from, so that it checks what state it would leave behind."""
    import subprocess

    script = paths.REPO / "deploy" / "docker" / "auditpipe-jobmanager"
    fake = tmp_path / "entrypoint"
    fake.write_text('#!/usr/bin/env bash\nwhile [ $# -gt 0 ]; do case "$1" in --config) cfg="$2"; shift;; '
                    '--fromSavepoint) echo "restore=$2"; shift;; --restored-from) echo "restored=$2"; shift;; esac; '
                    'shift; done\n'
                    'echo "backend=$(sed -n "s/^flink\\.state\\.backend\\.type=//p" "$cfg" | tail -n 1)"\n')
    fake.chmod(0o755)
    props = tmp_path / "job.properties"
    props.write_text("kafka.bootstrap-servers=kafka:9092\nflink.state.backend.type=rocksdb\n")
    checkpoints = tmp_path / "checkpoints"
    env = {"PATH": "/usr/bin:/bin", "AUDITPIPE_CHECKPOINTS": str(checkpoints), "AUDITPIPE_JOB_ID": "j1",
           "AUDITPIPE_JOB_PROPERTIES": str(props), "AUDITPIPE_FLINK_ENTRYPOINT": str(fake)}

    def run() -> dict[str, str]:
        out = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, check=True).stdout
        return dict(line.split("=", 1) for line in out.splitlines())

    assert run() == {"backend": "rocksdb"}
    assert (checkpoints / "state-backend").read_text().strip() == "rocksdb"
    (checkpoints / "j1" / "chk-7").mkdir(parents=True)
    (checkpoints / "j1" / "chk-7" / "_metadata").write_bytes(b"x")
    chk7 = str(checkpoints / "j1" / "chk-7")
    assert run() == {"restore": chk7, "restored": chk7, "backend": "rocksdb"}
    (checkpoints / "state-backend").unlink()  # checkpoints of a job before RocksDB
    assert run() == {"restore": chk7, "restored": chk7, "backend": "hashmap"}
    assert (checkpoints / "state-backend").read_text().strip() == "hashmap"
    assert "flink.state.backend.type=rocksdb" in props.read_text(), "the options init wrote are left as they are"

    # stopped with a canonical savepoint (docs/deployment.md): it resumes from that, on the configured backend
    import os

    savepoint = checkpoints / "savepoints" / "savepoint-0a1b2c-3d4e5f"
    savepoint.mkdir(parents=True)
    (savepoint / "_metadata").write_bytes(b"x")
    os.utime(checkpoints / "j1" / "chk-7" / "_metadata", (1000, 1000))
    assert run() == {"restore": str(savepoint), "restored": str(savepoint), "backend": "rocksdb"}
    assert (checkpoints / "state-backend").read_text().strip() == "rocksdb"
    (checkpoints / "j1" / "chk-8").mkdir()
    (checkpoints / "j1" / "chk-8" / "_metadata").write_bytes(b"x")  # the first checkpoint after it
    os.utime(savepoint / "_metadata", (2000, 2000))
    chk8 = str(checkpoints / "j1" / "chk-8")
    assert run() == {"restore": chk8, "restored": chk8, "backend": "rocksdb"}


@pytest.mark.parametrize("env, says", [
    ({"AUDITPIPE_LISTEN": "tcp:/127.0.0.1:5514"}, "AUDITPIPE_LISTEN must be tcp://HOST:PORT"),
    ({"AUDITPIPE_LISTEN": "tcp://127.0.0.1:port"}, "the port of AUDITPIPE_LISTEN must be a number"),
    ({"AUDITPIPE_LISTEN": "udp://127.0.0.1:70000"}, "must be 1-65535"),
    ({"AUDITPIPE_LISTEN": "tcp://a host:5514"}, "must be a host name or an IP address"),
    ({"AUDITPIPE_LISTEN": "tls://127.0.0.1:6514"}, "AUDITPIPE_LISTEN_TLS_CERT is not set"),
    ({"AUDITPIPE_LISTEN": "tcp://127.0.0.1:5514", "AUDITPIPE_LISTEN_FRAMING": "crlf"}, "AUDITPIPE_LISTEN_FRAMING must be"),
    ({"AUDITPIPE_LISTEN": "tcp://127.0.0.1:5514", "AUDITPIPE_OUTPUT": "mongo"}, "received syslog goes through Kafka"),
    ({"AUDITPIPE_LISTEN": "tcp://0.0.0.0:5514"}, "binds 0.0.0.0, which other hosts reach: there it takes only tls://"),
    ({"AUDITPIPE_LISTEN": "udp://10.0.0.5:5514"}, "plain tcp:// and udp:// listen on loopback only"),
    ({"AUDITPIPE_LISTEN": "tls://0.0.0.0:6514", "AUDITPIPE_LISTEN_TLS_CERT": "c", "AUDITPIPE_LISTEN_TLS_KEY": "k"},
     "AUDITPIPE_LISTEN_TLS_CA and AUDITPIPE_LISTEN_TLS_PEERS"),
    ({"AUDITPIPE_LISTEN": "tls://0.0.0.0:6514", "AUDITPIPE_LISTEN_TLS_CERT": "c", "AUDITPIPE_LISTEN_TLS_KEY": "k",
      "AUDITPIPE_LISTEN_TLS_PEERS": "db-01.example"}, "AUDITPIPE_LISTEN_TLS_CA is not set"),
    ({"AUDITPIPE_LISTEN": "tls://0.0.0.0:6514", "AUDITPIPE_LISTEN_TLS_CERT": "c", "AUDITPIPE_LISTEN_TLS_KEY": "k",
      "AUDITPIPE_LISTEN_TLS_CA": "ca", "AUDITPIPE_LISTEN_TLS_PEERS": "db-01.example"},
     "AUDITPIPE_SERVER must name the server"),
    ({}, "AUDITPIPE_AUDIT_LOG is not set"),
])
def test_the_fluentd_collector_refuses_a_bad_receiver_setting_by_name(tmp_path, env, says):
    """collectors/fluentd/run checks its environment before Fluentd starts (no fluentd needed for that)."""
    r = subprocess.run([str(paths.COLLECTORS / "fluentd" / "run")], capture_output=True, text=True, timeout=30,
                       env={"PATH": "/usr/bin:/bin", "FLUENTD": "/bin/false", "AUDITPIPE_KAFKA_BROKERS": "127.0.0.1:9",
                            "AUDITPIPE_STATE_DIR": str(tmp_path), **env})
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert says in r.stderr, r.stderr
