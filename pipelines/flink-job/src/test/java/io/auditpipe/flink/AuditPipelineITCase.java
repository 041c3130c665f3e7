package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.enrich.EvidenceKind;
import io.auditpipe.flink.archive.ArchiveFiles;
import io.auditpipe.flink.archive.EventArchive;
import io.auditpipe.flink.chain.ChainHead;
import io.auditpipe.flink.chain.EventChain;
import io.auditpipe.flink.document.EventDocument;
import io.auditpipe.flink.functions.AuditRecordDeserializer;
import io.auditpipe.flink.options.JobOptions;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.HourRow;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.flink.records.ParsedRecord;
import io.auditpipe.flink.records.RollupKey;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The whole job on a MiniCluster at parallelism 2, with a bounded source and collecting sinks. */
class AuditPipelineITCase {
    @RegisterExtension static final MiniClusterExtension FLINK = Fixtures.miniCluster();

    private static final int PER_SERVER = 600;

    /** A privilege change on db-01 (an account_change alert), sent twice. */
    static final byte[] GRANT =
            Fixtures.utf8(
                    new String(
                                    Fixtures.query(800_000, "grant", 0, 5),
                                    java.nio.charset.StandardCharsets.UTF_8)
                            .replace("SELECT 1", "GRANT ALL ON shop.* TO 'x'@'%'")
                            .replace(
                                    "800000_2026-11-22T09:00:00",
                                    "1_2026-11-22T08:00:00")); // a sequence of its own: no record

    // gap

    /**
     * Three minutes of traffic from two servers, each with one record a year ahead in its first
     * minute, a grant on db-01, 51 lines sent twice, and three messages that cannot be parsed.
     */
    static final List<ParsedRecord> INPUT = new ArrayList<>();

    static {
        long offset = 0;
        for (String server : List.of("db-01", "db-02")) {
            for (int i = 1; i <= PER_SERVER; i++) {
                INPUT.add(
                        AuditRecordDeserializer.parse(
                                Fixtures.key(server), line(i), origin(offset++)));
                if (server.equals("db-01") && i == 25) {
                    INPUT.add(
                            AuditRecordDeserializer.parse(
                                    Fixtures.key(server), GRANT, origin(offset++)));
                }
                if (i == PER_SERVER / 3) {
                    // a record from a clock a year ahead: it must not make the rest of its stream
                    // late
                    INPUT.add(
                            AuditRecordDeserializer.parse(
                                    Fixtures.key(server),
                                    Fixtures.query(900_000 + i, "select", 0, 365L * 86_400),
                                    origin(offset++)));
                }
            }
        }
        // the collector re-sends the first 50 lines of db-01 (a restart from its saved position),
        // the grant among them
        for (int i = 1; i <= 50; i++) {
            INPUT.add(
                    AuditRecordDeserializer.parse(
                            Fixtures.key("db-01"), line(i), origin(offset++)));
            if (i == 25)
                INPUT.add(
                        AuditRecordDeserializer.parse(
                                Fixtures.key("db-01"), GRANT, origin(offset++)));
        }
        INPUT.add(
                AuditRecordDeserializer.parse(
                        Fixtures.utf8("not a key"),
                        Fixtures.connect(1, "x", 0, 1),
                        origin(offset++)));
        INPUT.add(
                AuditRecordDeserializer.parse(
                        Fixtures.key("db-01"),
                        Fixtures.utf8("{\"audit_record\":"),
                        origin(offset++)));
        INPUT.add(
                AuditRecordDeserializer.parse(
                        Fixtures.key("db-02"), new byte[] {(byte) 0xc3}, origin(offset++)));
    }

    /**
     * Line i of a server's log: one connect (some failed) in ten, queries otherwise, over three
     * minutes.
     */
    private static byte[] line(int i) {
        long at = i * 180L / PER_SERVER;
        return i % 10 == 0
                ? Fixtures.connect(i, "app", i % 50 == 0 ? 1045 : 0, at)
                : Fixtures.query(i, i % 3 == 0 ? "update" : "select", i % 97 == 0 ? 1213 : 0, at);
    }

    private static KafkaOrigin origin(long offset) {
        return new KafkaOrigin("audit.raw", (int) (offset % 4), offset, Fixtures.T0.toEpochMilli());
    }

    @TempDir java.nio.file.Path archive;

    /** Runs the job on {@code sources} into {@code sinks} plus the archive in {@link #archive}. */
    private void runArchiving(PipelineSources sources, PipelineSinks.Builder sinks)
            throws Exception {
        String at = archive.toUri().toString();
        new AuditPipeline(
                        Fixtures.options(),
                        sources,
                        sinks.archive(EventArchive.events(at), EventArchive.chainHeads(at)).build())
                .execute(Fixtures.environment());
    }

    @Test
    void everyEventIsStoredCountedOnceAndBadInputIsDeadLettered() throws Exception {
        Collected c = new Collected("live");
        DataGeneratorSource<ParsedRecord> source = Fixtures.source(INPUT);
        runArchiving(new PipelineSources(source, source), c.live());

        List<IngestedEvent> stored = c.events.received();
        assertEquals(
                2 * PER_SERVER + 3,
                stored.size(),
                "the first copy of every record reaches the store");
        Set<String> ids = new HashSet<>();
        stored.forEach(e -> ids.add(e.event.id));
        assertEquals(2 * PER_SERVER + 3, ids.size(), "one event per record id");

        // the evidence: exactly the stored events of some evidence kind, once each (the failed
        // logins and the grant here), the same documents
        List<String> expected =
                stored.stream()
                        .filter(e -> EvidenceKind.any(e.event))
                        .map(e -> e.event.id)
                        .sorted()
                        .collect(java.util.stream.Collectors.toList());
        assertEquals(
                2 * (PER_SERVER / 50) + 1,
                expected.size(),
                "a failed login in fifty lines, and the grant");
        assertEquals(
                expected,
                c.evidence.received().stream()
                        .map(e -> e.event.id)
                        .sorted()
                        .collect(java.util.stream.Collectors.toList()));
        assertTrue(
                c.evidence.received().stream()
                        .allMatch(e -> e.chainSeq > 0 && e.chainDigest != null),
                "linked");

        // the rollups: the last count written for each (day, key) adds up to the stored events they
        // count
        Map<String, Long> days = new LinkedHashMap<>();
        c.rollups.received().forEach(r -> days.put(r.id(), r.count));
        long counted = stored.stream().filter(e -> RollupKey.counts(e.event)).count();
        assertTrue(
                counted >= 2 * (PER_SERVER / 50),
                "the failed logins evidence PCI DSS 10.2.1.4, at least");
        assertEquals(counted, days.values().stream().mapToLong(Long::longValue).sum());

        // one chain per server, 1..n without a gap, each link following the one before
        for (String server : List.of("db-01", "db-02")) {
            List<IngestedEvent> chain =
                    stored.stream()
                            .filter(e -> e.event.server.equals(server))
                            .sorted(java.util.Comparator.comparingLong(e -> e.chainSeq))
                            .collect(java.util.stream.Collectors.toList());
            String previous = "";
            for (int i = 0; i < chain.size(); i++) {
                assertEquals(i + 1, chain.get(i).chainSeq, server);
                assertEquals(
                        EventChain.link(previous, EventDocument.of(chain.get(i))),
                        chain.get(i).chainDigest,
                        server);
                previous = chain.get(i).chainDigest;
            }
        }
        // the archive holds exactly the stored events, with the same links
        Map<String, String> archived = ArchiveFiles.idsAndDigests(archive.resolve("events"));
        Map<String, String> storedLinks = new java.util.TreeMap<>();
        stored.forEach(e -> storedLinks.put(e.event.id, e.chainDigest));
        assertEquals(storedLinks, new java.util.TreeMap<>(archived));
        assertTrue(
                ArchiveFiles.partitions(archive.resolve("events"))
                        .contains("server=db-01/date=2026-11-22"),
                ArchiveFiles.partitions(archive.resolve("events")).toString());
        assertEquals(
                2,
                stored.stream().filter(e -> !e.eventTimeTrusted).count(),
                "the year-ahead records, flagged");

        // Each (minute, key) may be written several times (early firings); the last write is the
        // count.
        Map<String, Long> latest = new LinkedHashMap<>();
        c.stats.received().forEach(r -> latest.put(r.id(), r.count));
        assertEquals(
                2L * PER_SERVER + 3,
                latest.values().stream().mapToLong(Long::longValue).sum(),
                "stats add up to N: re-sent lines counted once, nothing made late by a record from the future");
        assertTrue(
                latest.keySet().stream().anyMatch(id -> id.contains("|db-02|app|Connect||1045")),
                latest.keySet().toString());
        long minutes =
                latest.keySet().stream()
                        .map(id -> id.substring(0, id.indexOf('|')))
                        .distinct()
                        .count();
        assertEquals(4, minutes, "10:00 to 10:03, event time");
        // each server's hour, the last write of it: the sum of its minutes
        Map<String, Long> hourly = new LinkedHashMap<>();
        c.hours.received().forEach(r -> hourly.put(r.id(), r.count()));
        Map<String, Long> minutesByServer = new java.util.TreeMap<>();
        latest.forEach((id, count) -> minutesByServer.merge(id.split("\\|")[1], count, Long::sum));
        assertEquals(
                Map.of(
                        Fixtures.T0.toEpochMilli() + "|db-01",
                        minutesByServer.get("db-01"),
                        Fixtures.T0.toEpochMilli() + "|db-02",
                        minutesByServer.get("db-02")),
                hourly);

        // app fails to log in every 15 s (4 in any minute: no brute force) between successful
        // logins: a success after 3 failures is login_after_failures. This test spreads one
        // server's records over partitions (Kafka keeps them in one), so which success comes after
        // the third failure varies.
        List<io.auditpipe.flink.alerts.Alert> all = c.alerts.received();
        // the year-ahead records are numbered 900,000 and more: a gap in each server's record
        // sequence
        assertEquals(
                List.of(
                        "record_gap/db-01/2026-11-22T09:00:00/601",
                        "record_gap/db-02/2026-11-22T09:00:00/601"),
                all.stream()
                        .filter(a -> a.rule.equals("record_gap"))
                        .map(a -> a.id)
                        .sorted()
                        .collect(java.util.stream.Collectors.toList()));
        // the grant was read twice by the alert rules (they read the topic on their own, copies
        // included): one alert
        assertEquals(
                List.of("account_change/db-01/1_2026-11-22T08:00:00"),
                all.stream()
                        .filter(a -> a.rule.equals("account_change"))
                        .map(a -> a.id)
                        .collect(java.util.stream.Collectors.toList()));
        List<io.auditpipe.flink.alerts.Alert> raised =
                all.stream()
                        .filter(
                                a ->
                                        !a.rule.equals("record_gap")
                                                && !a.rule.equals("account_change"))
                        .collect(java.util.stream.Collectors.toList());
        assertTrue(
                raised.stream()
                        .allMatch(
                                a -> a.rule.equals("login_after_failures") && a.evidenceCount >= 4),
                raised.toString());
        assertEquals(
                raised.size(),
                raised.stream().map(a -> a.id).distinct().count(),
                "each alert once");
        for (String server : List.of("db-01", "db-02")) {
            assertTrue(raised.stream().anyMatch(a -> a.server.equals(server)), server);
        }

        List<DeadLetter> dead = c.deadLetters.received();
        assertEquals(3, dead.size());
        assertTrue(
                dead.stream()
                        .allMatch(
                                d ->
                                        DeadLetter.STAGE_PARSE.equals(d.stage)
                                                && !d.reason.isEmpty()));
    }

    @Test
    void alertRulesReadingTheStorePathsEventsRaiseTheSameAlerts() throws Exception {
        // PipelineSources.sharedWithAlerts, the design the bench compares the job with: one read of
        // each record
        for (boolean shared : new boolean[] {false, true}) {
            // The generator splits the input among its two readers by index, so db-02's first
            // records and the rest come from two readers, in no order against each other (a job
            // reads each server from one partition, in order). A grace longer than the input's span
            // keeps that from being taken for a gap; the gaps of the records a year ahead still
            // come at the input's end.
            Configuration options =
                    JobOptions.load(
                                    Map.of(
                                            "kafka.bootstrap-servers",
                                            "unused:9092",
                                            "store.uri",
                                            "mongodb://unused/",
                                            "alerts.record-gap.grace",
                                            "1 h"),
                                    "test")
                            .job;
            DataGeneratorSource<ParsedRecord> source = Fixtures.source(INPUT);
            Collected c = new Collected("shared-" + shared);
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(2);
            env.configure(Configuration.fromMap(Map.of("restart-strategy.type", "none")));
            new AuditPipeline(
                            options,
                            shared
                                    ? PipelineSources.sharedWithAlerts(source)
                                    : new PipelineSources(source, source),
                            c.live().build())
                    .execute(env);
            List<io.auditpipe.flink.alerts.Alert> all = c.alerts.received();
            assertEquals(
                    List.of(
                            "account_change/db-01/1_2026-11-22T08:00:00",
                            "record_gap/db-01/2026-11-22T09:00:00/601",
                            "record_gap/db-02/2026-11-22T09:00:00/601"),
                    all.stream()
                            .filter(a -> !a.rule.equals("login_after_failures"))
                            .map(a -> a.id)
                            .sorted()
                            .collect(java.util.stream.Collectors.toList()),
                    "shared: " + shared);
            for (String server : List.of("db-01", "db-02")) {
                assertTrue(
                        all.stream()
                                .anyMatch(
                                        a ->
                                                a.server.equals(server)
                                                        && a.rule.equals("login_after_failures")),
                        server + ", shared: " + shared);
            }
        }
    }

    /**
     * Nine days of one principal: three records a day at 10:00-12:00, then one at 03:00, which its
     * collector sends twice.
     */
    static final List<ParsedRecord> NINE_DAYS = new ArrayList<>();

    static {
        long seq = 0;
        for (int day = 0; day < 8; day++) {
            for (int hour = 0; hour < 3; hour++) {
                long at = day * 86_400L + hour * 3_600L;
                NINE_DAYS.add(
                        AuditRecordDeserializer.parse(
                                Fixtures.key("db-01"),
                                Fixtures.query(++seq, "select", 0, at),
                                new KafkaOrigin(
                                        "audit.raw",
                                        0,
                                        seq,
                                        Fixtures.T0.toEpochMilli() + at * 1000 + 1000)));
            }
        }
        long night = 8 * 86_400L - 7 * 3_600L; // 03:00 of the ninth day
        for (int copy = 0; copy < 2; copy++) {
            NINE_DAYS.add(
                    AuditRecordDeserializer.parse(
                            Fixtures.key("db-01"),
                            Fixtures.query(seq + 1, "select", 0, night),
                            new KafkaOrigin(
                                    "audit.raw",
                                    0,
                                    seq + 1 + copy,
                                    Fixtures.T0.toEpochMilli() + night * 1000 + 1000)));
        }
    }

    @Test
    void aLearnedBaselineRaisesItsAlertFromTheStoredEventsOnce() throws Exception {
        Configuration options = Fixtures.options();
        DataGeneratorSource<ParsedRecord> source = Fixtures.source(NINE_DAYS);
        Collected c = new Collected("baselines");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(
                // one reader: the server's records in the order it wrote them, as from its
                // partition
                1);
        env.configure(Configuration.fromMap(Map.of("restart-strategy.type", "none")));
        new AuditPipeline(options, new PipelineSources(source, source), c.live().build())
                .execute(env);
        long night = Fixtures.T0.toEpochMilli() + (8 * 86_400L - 7 * 3_600L) * 1000;
        assertEquals(
                List.of("off_hours/db-01/app/" + night),
                c.alerts.received().stream()
                        .map(a -> a.id)
                        .collect(java.util.stream.Collectors.toList()));
    }

    @Test
    void importedHistoryWritesEachPrincipalsBaselineAtItsEnd() throws Exception {
        Configuration options = Fixtures.options();
        DataGeneratorSource<ParsedRecord> source = Fixtures.source(NINE_DAYS);
        CollectingSink<io.auditpipe.flink.baselines.Profile> profiles =
                new CollectingSink<>("history-baselines");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        env.configure(Configuration.fromMap(Map.of("restart-strategy.type", "none")));
        new AuditPipeline(
                        options,
                        PipelineSources.history(source, "import-b"),
                        new Collected("history-b").history().baselines(profiles, null).build())
                .execute(env);
        List<io.auditpipe.flink.baselines.Profile> written = profiles.received();
        assertEquals(1, written.size(), "one baseline per principal, written once");
        io.auditpipe.flink.baselines.Profile p = written.get(0);
        assertEquals(
                List.of("db-01", "app", 8, 8, 8, 1, 1L, 24L),
                List.of(
                        p.server,
                        p.user,
                        p.activeDays[10],
                        p.activeDays[11],
                        p.activeDays[12],
                        p.activeDays[3],
                        p.hourRecords,
                        p.hours),
                "each day's hours once; the re-sent copy not counted");
    }

    @Test
    void importedHistoryIsLinkedInItsChainAndEachCountWrittenOnce() throws Exception {
        Collected c = new Collected("history");
        runArchiving(PipelineSources.history(Fixtures.source(INPUT), "import-t"), c.history());

        Map<String, String> archived = ArchiveFiles.idsAndDigests(archive.resolve("events"));
        assertEquals(
                2 * PER_SERVER + 3,
                archived.size(),
                "every record once, the re-sent lines left out");
        // each server's hour is written once, when the watermark has passed it by the allowed
        // lateness, under the run's chain: an insert never meets a second write of its id
        List<String> ids =
                c.hours.received().stream()
                        .map(HourRow::id)
                        .collect(java.util.stream.Collectors.toList());
        assertEquals(new HashSet<>(ids).size(), ids.size(), "no hour written twice: " + ids);
        assertTrue(ids.stream().allMatch(id -> id.endsWith("|import-t")), ids.toString());
        assertEquals(
                2L * PER_SERVER + 3, c.hours.received().stream().mapToLong(r -> r.count()).sum());
        assertTrue(c.rollups.received().stream().allMatch(r -> "import-t".equals(r.chain)));
        assertTrue(c.evidence.received().stream().allMatch(e -> "import-t".equals(e.chain)));
        // the last head of each server's chain names it and anchors its last link, whatever the
        // head interval
        Map<String, Long> last = new LinkedHashMap<>();
        for (ChainHead h : c.heads.received()) {
            assertEquals("import-t", h.chain);
            last.merge(h.server, h.seq, Math::max);
        }
        assertEquals(
                Map.of("db-01", (long) PER_SERVER + 1 + 1, "db-02", (long) PER_SERVER + 1), last);
        assertEquals(3, c.deadLetters.received().size(), "the three bad records");
    }
}
