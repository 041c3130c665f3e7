package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.flink.archive.EventArchive;
import io.auditpipe.flink.chain.EventChain;
import io.auditpipe.flink.document.EventDocument;
import io.auditpipe.flink.records.HourRow;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.StatsRow;
import io.auditpipe.flink.sessions.Session;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job's state as each release left it carries on in this job. Each release keeps the state it
 * took of {@link ReleaseInput} halfway as test data ({@code src/test/resources/release-state/
 * <version>/}: a savepoint in Flink's canonical format and {@code taken.json}, what the job had
 * written by then; and the archive it writes of the whole input), made by that release's own code
 * ({@link #writeThisReleasesState}). This job restores each, every operator's state claimed, reads
 * the rest of the input, and must store each record not stored before once (the copies the state
 * remembers are not stored again), continue each server's chain at the link after the one the state
 * holds, count each server's hour in full and carry each open session on. A state layout changed
 * without carrying the old one over fails here, naming what broke.
 */
class ReleaseStateITCase {
    @RegisterExtension static final MiniClusterExtension FLINK = Fixtures.miniCluster();

    /** Where the releases' states are kept (the module's test resources). */
    static final Path STATES = Path.of("src/test/resources/release-state");

    @TempDir Path work;

    @Test
    void theStateOfEachReleaseCarriesOn() throws Exception {
        List<Path> releases;
        try (Stream<Path> dirs = Files.list(STATES)) {
            releases = dirs.filter(Files::isDirectory).sorted().toList();
        }
        assertFalse(releases.isEmpty(), "no release's state in " + STATES.toAbsolutePath());
        for (Path release : releases) {
            // RocksDB, as the local stack and the deployment run the job, and the heap
            for (String backend : List.of("rocksdb", "hashmap")) carriesOn(release, backend);
        }
    }

    private void carriesOn(Path release, String backend) throws Exception {
        String name = release.getFileName().toString() + " on " + backend;
        Document taken =
                Document.parse(
                        Files.readString(release.resolve("taken.json"), StandardCharsets.UTF_8));
        Path savepoint = work.resolve(name.replace(' ', '-'));
        copy(release.resolve("savepoint"), savepoint);
        Configuration restore = new Configuration();
        restore.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint.toUri().toString());
        restore.set(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, false);
        restore.set(StateBackendOptions.STATE_BACKEND, backend);
        StreamExecutionEnvironment env = Fixtures.environment();
        env.configure(restore);
        Collected c = new Collected("after-" + name.replace(' ', '-'));
        CollectingSink<Session> sessions = new CollectingSink<>("sessions-after-" + name);
        new AuditPipeline(
                        Fixtures.options(),
                        new PipelineSources(ReleaseInput.source(-1), ReleaseInput.source(-1)),
                        c.live().sessions(sessions).build())
                .execute(env);

        // each record not stored before the state was taken, once; the re-sent copies not at all
        Set<String> storedBefore = new HashSet<>(taken.getList("stored", String.class));
        Map<String, Integer> expected = new TreeMap<>();
        for (long i = 0; i < ReleaseInput.RECORDS; i++) {
            String id = ReleaseInput.record(i).event.event.id;
            if (!storedBefore.contains(id)) expected.merge(id, 1, (a, b) -> 1);
        }
        Map<String, Integer> stored = new TreeMap<>();
        for (IngestedEvent e : c.events.received()) stored.merge(e.event.id, 1, Integer::sum);
        assertEquals(expected, stored, name + ": the records after the state, each once");

        // each server's chain goes on at the link after the one the state holds
        Document tips = taken.get("tips", Document.class);
        for (String server : List.of("db-01", "db-02")) {
            Document tip = tips.get(server, Document.class);
            List<IngestedEvent> links =
                    c.events.received().stream()
                            .filter(e -> e.event.server.equals(server))
                            .sorted(Comparator.comparingLong(e -> e.chainSeq))
                            .toList();
            assertFalse(links.isEmpty(), name + ": " + server + " stored nothing after the state");
            long seq = ((Number) tip.get("seq")).longValue();
            String digest = tip.getString("digest");
            for (IngestedEvent e : links) {
                assertEquals(++seq, e.chainSeq, name + ": " + server + "'s next link");
                assertEquals(
                        EventChain.link(digest, EventDocument.of(e)),
                        e.chainDigest,
                        name + ": " + server + " link " + seq + " follows the one before it");
                digest = e.chainDigest;
            }
        }

        // each server's hour counted in full: the minutes counted before the state and after it
        Map<String, Long> hours = new HashMap<>();
        for (HourRow h : c.hours.received()) hours.merge(h.server(), h.count(), Math::max);
        assertEquals(
                Map.of(
                        "db-01",
                        (long) ReleaseInput.PER_SERVER - ReleaseInput.RESENT,
                        "db-02",
                        (long) ReleaseInput.PER_SERVER),
                hours,
                name + ": each server's events of the hour");
        Map<String, Long> minutes = new TreeMap<>();
        taken.get("minutes", Document.class)
                .forEach((id, n) -> minutes.put(id, ((Number) n).longValue()));
        for (StatsRow r : c.stats.received()) minutes.merge(r.id(), r.count, Math::max);
        Map<String, Long> perServer = new TreeMap<>();
        minutes.forEach((id, n) -> perServer.merge(id.split("\\|")[1], n, Long::sum));
        assertEquals(
                hours,
                perServer,
                name + ": the minutes' counts, before the state and after it, add up to the hour");
        sessionsCarryOn(name, sessions.received());
    }

    /**
     * The records of each server's session on connection 12, where every query of {@link
     * ReleaseInput} runs: the queries read before the state and after it, each once.
     */
    private static void sessionsCarryOn(String name, List<Session> sessions) {
        Map<String, Set<String>> queries = new TreeMap<>();
        for (long i = 0; i < ReleaseInput.RECORDS; i++) {
            var e = ReleaseInput.record(i).event.event;
            if (e.connectionId == 12)
                queries.computeIfAbsent(e.server, k -> new HashSet<>()).add(e.id);
        }
        Map<String, Long> expected = new TreeMap<>();
        queries.forEach((server, ids) -> expected.put(server, (long) ids.size()));
        Map<String, Long> records = new TreeMap<>();
        for (Session s : sessions)
            if (s.connectionId == 12) records.merge(s.server, s.records, Math::max);
        assertEquals(expected, records, name + ": each server's session of the queries");
    }

    /**
     * Writes this release's state of {@link ReleaseInput} into the folder the system property
     * {@code auditpipe.release-state} names (src/test/resources/release-state/<version>): {@code
     * mvn -f pipelines/pom.xml test -pl flink-job -am -Dsurefire.failIfNoSpecifiedTests=false
     * -Dtest=ReleaseStateITCase#writeThisReleasesState -Dauditpipe.release-state=DIR}.
     */
    @Test
    @EnabledIfSystemProperty(named = "auditpipe.release-state", matches = ".+")
    void writeThisReleasesState() throws Exception {
        Path out = Path.of(System.getProperty("auditpipe.release-state")).toAbsolutePath();
        StreamExecutionEnvironment env = Fixtures.environment();
        Collected c = new Collected("before");
        new AuditPipeline(
                        Fixtures.options(),
                        new PipelineSources(
                                ReleaseInput.source(ReleaseInput.BEFORE),
                                ReleaseInput.source(ReleaseInput.BEFORE)),
                        c.live().sessions(new CollectingSink<>("sessions-before")).build())
                .build(env);
        JobClient job = env.executeAsync("release state");
        long deadline = System.nanoTime() + ReleaseInput.PATIENCE.toNanos();
        while (c.events.received().size() < 2 * ReleaseInput.BEFORE) {
            assertTrue(System.nanoTime() < deadline, "the first half stored in time");
            Thread.sleep(100);
        }
        String location =
                job.stopWithSavepoint(
                                false,
                                work.resolve("savepoints").toUri().toString(),
                                SavepointFormatType.CANONICAL)
                        .get();
        Files.createDirectories(out);
        copy(Path.of(java.net.URI.create(location)), out.resolve("savepoint"));

        Document tips = new Document();
        List<String> stored = new ArrayList<>();
        for (IngestedEvent e : c.events.received()) {
            stored.add(e.event.id);
            Document tip = tips.get(e.event.server, Document.class);
            if (tip == null || tip.getLong("seq") < e.chainSeq)
                tips.put(
                        e.event.server,
                        new Document("seq", e.chainSeq).append("digest", e.chainDigest));
        }
        Document minutes = new Document();
        for (StatsRow r : c.stats.received())
            minutes.put(r.id(), Math.max(r.count, minutes.get(r.id(), 0L)));
        stored.sort(null);
        Files.writeString(
                out.resolve("taken.json"),
                new Document("tips", tips)
                                .append("stored", stored)
                                .append("minutes", minutes)
                                .toJson()
                        + "\n",
                StandardCharsets.UTF_8);

        // the archive this release writes of the whole input, which every later release's readers
        // read and verify (tests/unit/archive/test_release_archives.py)
        String archive = out.resolve("archive").toUri().toString();
        StreamExecutionEnvironment whole = Fixtures.environment();
        new AuditPipeline(
                        Fixtures.options(),
                        new PipelineSources(ReleaseInput.source(-1), ReleaseInput.source(-1)),
                        new Collected("archive")
                                .live()
                                .archive(
                                        EventArchive.events(archive),
                                        EventArchive.chainHeads(archive))
                                .build())
                .execute(whole);
    }

    private static void copy(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) Files.createDirectories(target);
                else Files.copy(f, target);
            }
        }
    }
}
