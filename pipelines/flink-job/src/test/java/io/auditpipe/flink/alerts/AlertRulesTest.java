package io.auditpipe.flink.alerts;

import static io.auditpipe.flink.Harnesses.opened;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.enrich.Enricher;
import io.auditpipe.parser.AuditEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.operators.StreamFlatMap;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * Every alert rule in Flink's operator test harness: positive, negative, the threshold boundary,
 * out-of-order and late events, state cleared, the same alert ids after a restore from a snapshot.
 */
class AlertRulesTest {
    static final long T0 = Instant.parse("2026-11-22T10:00:00Z").toEpochMilli();
    static final long S = 1000;

    static AlertSettings settings() {
        AlertSettings s = new AlertSettings();
        s.bruteForceFailures = 5;
        s.bruteForceWindowMillis = 60 * S;
        s.sprayAccounts = 4;
        s.sprayWindowMillis = 300 * S;
        s.loginAfterFailures = 3;
        s.loginAfterFailuresWindowMillis = 300 * S;
        s.unauthorizedAccessWindowMillis = 600 * S;
        s.allowedLatenessMillis = 120 * S;
        s.compliance =
                ComplianceSettings.fromProperties(
                        Map.of(
                                "compliance.data-class.hipaa_ephi.tables", "clinic.patients",
                                "compliance.data-class.hipaa_ephi.allowed-principals", "nurse_*",
                                "compliance.data-class.pci_cardholder.tables", "shop.cards",
                                "compliance.principals.service-accounts", "etl_*",
                                "compliance.change-windows", "sat 02:00-06:00 UTC"));
        return s;
    }

    static int seq;

    static AuditEvent login(String user, String ip, boolean ok, long at) {
        AuditEvent e = new AuditEvent();
        e.id = "db-01/" + (++seq) + "_" + at;
        e.server = "db-01";
        e.eventName = "Connect";
        e.user = user;
        e.host = "client";
        e.ip = ip;
        e.status = ok ? 0 : 1045;
        e.authOutcome = ok ? AuditEvent.AUTH_SUCCESS : AuditEvent.AUTH_FAILURE;
        e.eventTimeMillis = at;
        return e;
    }

    static AuditEvent query(String user, String sql, long at) {
        AuditEvent e = new AuditEvent();
        e.id = "db-01/" + (++seq) + "_" + at;
        e.server = "db-01";
        e.eventName = "Query";
        e.user = user;
        e.host = "client";
        e.db = "shop";
        e.status = 0;
        e.sqltext = sql;
        e.eventTimeMillis = at;
        try (Enricher enricher = new Enricher(settings().compliance)) {
            return enricher.enrich(e);
        }
    }

    static KeyedOneInputStreamOperatorTestHarness<String, AuditEvent, Alert> perAccount()
            throws Exception {
        return new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new FailedLoginsPerAccount(settings())),
                e -> e.server + "\u0000" + e.user,
                Types.STRING);
    }

    static KeyedOneInputStreamOperatorTestHarness<String, AuditEvent, Alert> perOrigin()
            throws Exception {
        return new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new FailedLoginsPerOrigin(settings())),
                e -> e.server + "\u0000" + FailedLoginsPerOrigin.origin(e),
                Types.STRING);
    }

    static void feed(OneInputStreamOperatorTestHarness<AuditEvent, Alert> h, AuditEvent... events)
            throws Exception {
        for (AuditEvent e : events) h.processElement(new StreamRecord<>(e, e.eventTimeMillis));
    }

    static List<String> alerts(OneInputStreamOperatorTestHarness<?, Alert> h) {
        return h.extractOutputValues().stream().map(a -> a.id).collect(Collectors.toList());
    }

    @Test
    void bruteForceAtTheThresholdOnceAnEpisode() throws Exception {
        try (var h = opened(perAccount())) {
            for (int i = 0; i < 4; i++) feed(h, login("alice", "10.0.0.9", false, T0 + i * 10 * S));
            assertEquals(List.of(), alerts(h), "4 failures: below the threshold of 5");
            feed(h, login("alice", "10.0.0.9", false, T0 + 40 * S));
            assertEquals(
                    List.of("brute_force/db-01/alice/" + T0), alerts(h), "the 5th within a minute");
            Alert a = h.extractOutputValues().get(0);
            assertEquals(5, a.evidenceCount);
            assertEquals("high", a.severity);
            assertTrue(a.summary.contains("5 failed logins for account 'alice'"), a.summary);
            for (int i = 0; i < 10; i++)
                feed(h, login("alice", "10.0.0.9", false, T0 + (50 + i * 10) * S));
            assertEquals(1, alerts(h).size(), "the attack going on is the same episode");
            // a quiet spell longer than the window, then a new burst: a new alert
            for (int i = 0; i < 5; i++)
                feed(h, login("alice", "10.0.0.9", false, T0 + (400 + i) * S));
            assertEquals(
                    List.of(
                            "brute_force/db-01/alice/" + T0,
                            "brute_force/db-01/alice/" + (T0 + 400 * S)),
                    alerts(h));
        }
    }

    @Test
    void failuresSpreadWiderThanTheWindowAndOtherAccountsRaiseNothing() throws Exception {
        try (var h = opened(perAccount())) {
            for (int i = 0; i < 10; i++)
                feed(h, login("bob", "10.0.0.9", false, T0 + i * 16 * S)); // 4 in any minute
            for (int i = 0; i < 4; i++) feed(h, login("carol" + i, "10.0.0.9", false, T0 + i * S));
            feed(
                    h,
                    login(
                            "bob",
                            "10.0.0.9",
                            true,
                            T0 + 200 * S)); // a success after 4 failures in the window...
            assertEquals(
                    List.of("login_after_failures/" + "db-01/" + seq + "_" + (T0 + 200 * S)),
                    alerts(h),
                    "...is login_after_failures, and nothing else fired");
        }
    }

    @Test
    void outOfOrderFailuresFallInTheirWindowAndLateOnesAreNotEvaluated() throws Exception {
        try (var h = opened(perAccount())) {
            // arrive newest first: still 5 within a minute of event time
            for (int i = 4; i >= 0; i--) feed(h, login("dave", "10.0.0.9", false, T0 + i * 10 * S));
            assertEquals(List.of("brute_force/db-01/dave/" + T0), alerts(h));
            h.processWatermark(T0 + 1000 * S);
            for (int i = 0; i < 5; i++)
                feed(
                        h,
                        login(
                                "erin",
                                "10.0.0.9",
                                false,
                                T0 + 500 * S + i)); // 500 s behind: too late
            assertEquals(1, alerts(h).size());
            assertEquals(
                    0,
                    h.numKeyedStateEntries(),
                    "state cleared once the watermark passed window and lateness");
            assertEquals(0, h.numEventTimeTimers(), "and its timers");
        }
    }

    @Test
    void loginAfterFailuresNeedsTheThresholdWithinItsWindowAndReportsFailuresOnce()
            throws Exception {
        try (var h = opened(perAccount())) {
            feed(
                    h,
                    login("frank", "10.0.0.9", false, T0),
                    login("frank", "10.0.0.9", false, T0 + S));
            feed(h, login("frank", "10.0.0.9", true, T0 + 2 * S));
            assertEquals(List.of(), alerts(h), "2 failures: below 3");
            feed(h, login("frank", "10.0.0.9", false, T0 + 3 * S));
            AuditEvent success = login("frank", "10.0.0.9", true, T0 + 4 * S);
            feed(h, success);
            assertEquals(List.of("login_after_failures/" + success.id), alerts(h));
            assertEquals(
                    List.of(h.extractOutputValues().get(0).evidence.get(3)), List.of(success.id));
            assertEquals("critical", h.extractOutputValues().get(0).severity);
            feed(h, login("frank", "10.0.0.9", true, T0 + 5 * S));
            assertEquals(1, alerts(h).size(), "the same failures are not reported twice");
            feed(h, login("grace", "10.0.0.9", false, T0));
            feed(h, login("grace", "10.0.0.9", false, T0 + S));
            feed(h, login("grace", "10.0.0.9", false, T0 + 2 * S));
            feed(h, login("grace", "10.0.0.9", true, T0 + 400 * S));
            assertEquals(1, alerts(h).size(), "failures older than the window do not count");
        }
    }

    @Test
    void aRestoreFromASnapshotRaisesTheSameAlert() throws Exception {
        org.apache.flink.runtime.checkpoint.OperatorSubtaskState snapshot;
        List<AuditEvent> burst = new ArrayList<>();
        for (int i = 0; i < 5; i++) burst.add(login("heidi", "10.0.0.9", false, T0 + i * S));
        List<String> first;
        try (var h = opened(perAccount())) {
            feed(h, burst.subList(0, 3).toArray(new AuditEvent[0]));
            snapshot = h.snapshot(1, 0);
            feed(h, burst.subList(3, 5).toArray(new AuditEvent[0]));
            first = alerts(h);
        }
        try (var h = perAccount()) {
            h.initializeState(snapshot);
            h.open();
            feed(
                    h,
                    burst.subList(3, 5)
                            .toArray(new AuditEvent[0])); // replayed after the checkpoint
            assertEquals(first, alerts(h));
        }
    }

    @Test
    void passwordSprayCountsDistinctAccountsFromOneOrigin() throws Exception {
        try (var h = opened(perOrigin())) {
            feed(
                    h,
                    login("a", "10.6.6.6", false, T0),
                    login("a", "10.6.6.6", false, T0 + S),
                    login("b", "10.6.6.6", false, T0 + 2 * S),
                    login("c", "10.6.6.6", false, T0 + 3 * S));
            feed(h, login("x", "10.0.0.1", false, T0 + 4 * S)); // another origin
            assertEquals(List.of(), alerts(h), "3 accounts from 10.6.6.6: below 4");
            feed(h, login("d", "10.6.6.6", false, T0 + 290 * S));
            assertEquals(List.of("password_spray/db-01/10.6.6.6/" + T0), alerts(h));
            Alert a = h.extractOutputValues().get(0);
            assertEquals(5, a.evidenceCount);
            assertTrue(
                    a.summary.contains("for 4 accounts") && a.summary.contains("a, b, c, d"),
                    a.summary);
            feed(h, login("e", "10.6.6.6", false, T0 + 295 * S));
            assertEquals(1, alerts(h).size(), "same episode");
            feed(
                    h,
                    login("p", "10.7.7.7", false, T0),
                    login("q", "10.7.7.7", false, T0 + 100 * S),
                    login("r", "10.7.7.7", false, T0 + 200 * S),
                    login("s", "10.7.7.7", false, T0 + 301 * S));
            assertEquals(
                    1, alerts(h).size(), "4 accounts, but over 301 s: outside the 300 s window");
            h.processWatermark(T0 + 301 * S + 300 * S + 120 * S);
            assertEquals(
                    0,
                    h.numKeyedStateEntries(),
                    "state cleared once the watermark passed window and lateness");
            assertEquals(0, h.numEventTimeTimers(), "and its timers");
        }
    }

    @Test
    void unauthorizedAccessOncePerWindowPerPrincipalAndClass() throws Exception {
        var h =
                new KeyedOneInputStreamOperatorTestHarness<String, AuditEvent, Alert>(
                        new KeyedProcessOperator<>(new UnauthorizedAccess(settings())),
                        UnauthorizedAccess::key,
                        Types.STRING);
        try (h) {
            h.open();
            AuditEvent first = query("etl_load", "SELECT * FROM clinic.patients", T0 + 5 * S);
            assertEquals(List.of("hipaa_ephi"), first.accessViolations);
            feed(
                    h,
                    first,
                    query("etl_load", "SELECT * FROM clinic.patients WHERE id = 2", T0 + 6 * S));
            // T0 (10:00) starts a 10-minute window of the epoch
            assertEquals(
                    List.of("unauthorized_data_access/db-01/etl_load/hipaa_ephi/" + T0), alerts(h));
            assertEquals(1, alerts(h).size(), "one alert for the window");
            Alert a = h.extractOutputValues().get(0);
            assertEquals(List.of(first.id), a.evidence);
            assertTrue(
                    a.summary.contains("service_account") && a.summary.contains("clinic.patients"),
                    a.summary);
            feed(h, query("etl_load", "SELECT * FROM clinic.patients", T0 + 700 * S));
            assertEquals(2, alerts(h).size(), "the next window alerts again");
            h.processWatermark(T0 + 1200 * S + 120 * S);
            assertEquals(
                    0,
                    h.numKeyedStateEntries(),
                    "state cleared once the watermark passed window and lateness");
            assertEquals(0, h.numEventTimeTimers(), "and its timers");
        }
    }

    @Test
    void eventRules() throws Exception {
        var h =
                new OneInputStreamOperatorTestHarness<AuditEvent, Alert>(
                        new StreamFlatMap<>(new EventRules(settings())));
        try (h) {
            h.open();
            AuditEvent grant = query("alice", "GRANT ALL ON *.* TO mallory", T0);
            AuditEvent refused = query("alice", "CREATE USER x", T0);
            refused.status = 1227;
            AuditEvent select = query("alice", "SELECT * FROM shop.cards", T0);
            AuditEvent off = query("root", "SET GLOBAL server_audit_logging = OFF", T0);
            AuditEvent removed = query("root", "UNINSTALL PLUGIN audit_log", T0);
            AuditEvent ddlMonday =
                    query(
                            "alice",
                            "ALTER TABLE cards ADD COLUMN x INT",
                            Instant.parse("2026-11-23T03:00:00Z").toEpochMilli());
            AuditEvent ddlSaturday =
                    query(
                            "alice",
                            "ALTER TABLE cards ADD COLUMN y INT",
                            Instant.parse("2026-11-21T03:00:00Z").toEpochMilli());
            AuditEvent ddlUnclassified = query("alice", "ALTER TABLE notes ADD COLUMN y INT", T0);
            feed(h, grant, refused, select, off, removed, ddlMonday, ddlSaturday, ddlUnclassified);
            assertEquals(
                    List.of(
                            "account_change/" + grant.id,
                            "account_change/" + refused.id,
                            "audit_stopped/" + off.id,
                            "audit_stopped/" + removed.id,
                            "ddl_outside_change_window/" + ddlMonday.id),
                    alerts(h));
            List<Alert> out = h.extractOutputValues();
            assertEquals(
                    List.of("high", "medium", "critical", "critical", "high"),
                    out.stream().map(a -> a.severity).collect(Collectors.toList()));
            assertTrue(
                    out.get(4).summary.contains("shop.cards (pci_cardholder)"), out.get(4).summary);
            assertTrue(
                    out.get(0).controls.contains("PCI-DSS-10.2.1.5"),
                    out.get(0).controls.toString());
        }
    }

    static AuditEvent record(long n, long at) {
        AuditEvent e = new AuditEvent();
        e.server = "db-01";
        e.format = "percona-json";
        e.recordId = n + "_2026-11-22T09:00:00";
        e.id = "db-01/" + e.recordId;
        e.eventName = "Query";
        e.eventTimeMillis = at;
        return e;
    }

    static KeyedOneInputStreamOperatorTestHarness<String, RecordGaps.Numbered, Alert> gaps()
            throws Exception {
        AlertSettings s = settings();
        s.recordGapGraceMillis = 30 * S;
        return new KeyedOneInputStreamOperatorTestHarness<>(
                new io.auditpipe.flink.functions.WriteBackOperator<>(new RecordGaps(s)),
                r -> r.sequence,
                Types.STRING);
    }

    /** Feeds the gap rule as the job does: each event as the fields the rule reads. */
    static void feed(
            KeyedOneInputStreamOperatorTestHarness<String, RecordGaps.Numbered, Alert> h,
            AuditEvent... events)
            throws Exception {
        for (AuditEvent e : events)
            h.processElement(new StreamRecord<>(RecordGaps.numbered(e), e.eventTimeMillis));
    }

    @Test
    void aMissingRecordIsAGapOnceItsGraceHasPassedAndAnOutOfOrderOneIsNot() throws Exception {
        try (var h = opened(gaps())) {
            feed(
                    h,
                    record(100, T0),
                    record(101, T0 + S),
                    record(103, T0 + 3 * S)); // 102 is late...
            h.processWatermark(T0 + 20 * S);
            feed(
                    h,
                    record(102, T0 + 2 * S),
                    record(102, T0 + 2 * S)); // ...arrives within the grace (and again)
            h.processWatermark(T0 + 60 * S);
            assertEquals(List.of(), alerts(h), "out of order, not missing");
            feed(h, record(104, T0 + 61 * S), record(107, T0 + 62 * S), record(108, T0 + 63 * S));
            h.processWatermark(T0 + 62 * S + 30 * S - 1);
            assertEquals(List.of(), alerts(h), "the grace has not passed");
            h.processWatermark(T0 + 62 * S + 30 * S);
            assertEquals(List.of("record_gap/db-01/2026-11-22T09:00:00/105"), alerts(h));
            Alert a = h.extractOutputValues().get(0);
            assertTrue(
                    a.summary.startsWith(
                            "2 records, 105 to 106, are missing from the audit trail of db-01"),
                    a.summary);
            assertEquals(List.of("db-01/107_2026-11-22T09:00:00"), a.evidence);
            assertEquals(T0 + 62 * S, a.firstEventMillis, "the time of the record after the gap");
            feed(h, record(105, T0 + 64 * S), record(109, T0 + 65 * S));
            h.processWatermark(T0 + 200 * S);
            assertEquals(
                    1, alerts(h).size(), "a record given up on is not a new gap; 109 follows 108");
            assertEquals(0, h.numEventTimeTimers(), "no record waits: no timer");
            // what a sequence keeps for its life is its next number (the waiting records went with
            // their timers), written into state before each checkpoint
            h.snapshot(2, 2);
            assertEquals(1, h.numKeyedStateEntries());
            AuditEvent mariadb = record(1, T0);
            mariadb.format = "mariadb-audit";
            assertEquals(
                    null,
                    RecordGaps.sequenceKey(mariadb),
                    "only Percona's numbered records form a sequence");
            assertEquals(null, RecordGaps.numbered(mariadb));
        }
    }

    @Test
    void aGapSurvivesARestoreAndIsAlertedOnce() throws Exception {
        org.apache.flink.runtime.checkpoint.OperatorSubtaskState snapshot;
        try (var h = opened(gaps())) {
            feed(h, record(1, T0), record(3, T0 + S));
            snapshot = h.snapshot(1, 0);
        }
        try (var h = gaps()) {
            h.initializeState(snapshot);
            h.open();
            h.processWatermark(T0 + 40 * S);
            assertEquals(List.of("record_gap/db-01/2026-11-22T09:00:00/2"), alerts(h));
        }
    }

    static AuditEvent start(long at) {
        AuditEvent e = record(1, at);
        e.eventName = "Audit";
        e.category = io.auditpipe.enrich.EventTaxonomy.AUDIT_SYSTEM;
        e.action = "audit_start";
        return e;
    }

    /** A dead letter of the parse stage whose line still shows record {@code n}'s id. */
    static io.auditpipe.flink.records.DeadLetter deadLine(long n, long at) {
        byte[] line =
                ("{\"audit_record\":{\"name\":\"Query\",\"record\":\""
                                + n
                                + "_2026-11-22T09:00:00\",\"timestamp\":\"2026-1")
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        var d =
                io.auditpipe.flink.records.DeadLetter.of(
                        io.auditpipe.flink.records.DeadLetter.STAGE_PARSE,
                        "not JSON",
                        null,
                        line,
                        new io.auditpipe.flink.records.KafkaOrigin("audit.raw", 0, 500 + n, at));
        d.server = "db-01";
        return d;
    }

    static void feedDead(
            KeyedOneInputStreamOperatorTestHarness<String, RecordGaps.Numbered, Alert> h,
            io.auditpipe.flink.records.DeadLetter... letters)
            throws Exception {
        for (var d : letters) {
            RecordGaps.Numbered n = RecordGaps.deadLettered(d);
            assertTrue(n != null, "the dead letter shows its record's number");
            h.processElement(new StreamRecord<>(n, d.origin.timestampMillis));
        }
    }

    @Test
    void eachGapIsClassifiedAndARestartIsNotAlarming() throws Exception {
        try (var h = opened(gaps())) {
            feed(h, start(T0), record(2, T0 + S));
            List<Alert> out = h.extractOutputValues();
            assertEquals(1, out.size(), "the numbering started: at once, before any grace");
            assertEquals(
                    List.of("restart", "low", "record_gap/db-01/2026-11-22T09:00:00/0"),
                    List.of(out.get(0).gapClass, out.get(0).severity, out.get(0).id));
            assertTrue(out.get(0).summary.contains("started again"), out.get(0).summary);
            // 3 and 4 are dead letters: a gap of dead letters only
            feedDead(h, deadLine(3, T0 + 2 * S), deadLine(4, T0 + 2 * S));
            feed(h, record(5, T0 + 3 * S));
            // 6 is a dead letter, 7 is simply missing: unexplained, the dead letter named
            feedDead(h, deadLine(6, T0 + 4 * S));
            feed(h, record(8, T0 + 5 * S));
            h.processWatermark(T0 + 100 * S);
            out = h.extractOutputValues();
            assertEquals(3, out.size(), out.toString());
            assertEquals(
                    List.of("dead_letter", "medium", "record_gap/db-01/2026-11-22T09:00:00/3"),
                    List.of(out.get(1).gapClass, out.get(1).severity, out.get(1).id));
            assertTrue(
                    out.get(1).summary.contains("parse:audit.raw/0/503, parse:audit.raw/0/504"),
                    out.get(1).summary);
            assertEquals(
                    List.of("unexplained", "high", "record_gap/db-01/2026-11-22T09:00:00/6"),
                    List.of(out.get(2).gapClass, out.get(2).severity, out.get(2).id));
            assertTrue(
                    out.get(2)
                            .summary
                            .contains("1 of them are dead letters, parse:audit.raw/0/506"),
                    out.get(2).summary);
            // what stays is the next number: the dead-lettered numbers went with their gaps
            h.snapshot(1, 1);
            assertEquals(1, h.numKeyedStateEntries());
            assertEquals(0, h.numEventTimeTimers());
        }
    }

    @Test
    void aDeadLetterThatArrivesBeforeItsSequencesRecordsWaitsForTheirTimeNotItsShippingTime()
            throws Exception {
        // The records and the dead letters reach the rule on two inputs (a union): nothing orders
        // one against the other. A log written at once ships a minute after its records' own times;
        // its dead letter's time is when it was shipped. Here it arrives before every record of its
        // sequence.
        try (var h = opened(gaps())) {
            feedDead(h, deadLine(4, T0 + 90 * S));
            feed(
                    h,
                    start(T0),
                    record(2, T0 + S),
                    record(3, T0 + S),
                    record(5, T0 + 2 * S),
                    record(6, T0 + 60 * S));
            // the records' watermark, a minute of records later: the dead letter's shipping time
            // plus the grace is still ahead of it
            h.processWatermark(T0 + 55 * S);
            assertEquals(
                    List.of("restart", "dead_letter"),
                    h.extractOutputValues().stream()
                            .map(a -> a.gapClass)
                            .collect(Collectors.toList()),
                    "the restart and the gap by the records' times, not the dead letter's");
            assertEquals(
                    List.of(
                            "record_gap/db-01/2026-11-22T09:00:00/0",
                            "record_gap/db-01/2026-11-22T09:00:00/4"),
                    alerts(h));
            h.processWatermark(T0 + 200 * S);
            assertEquals(2, alerts(h).size(), "nothing more: record 6 follows 5");
            assertEquals(0, h.numEventTimeTimers());
        }
    }

    @Test
    void aDeadLetterSurvivesARestoreAndAnotherStageOrAServerlessOneIsNoNumber() throws Exception {
        org.apache.flink.runtime.checkpoint.OperatorSubtaskState snapshot;
        try (var h = opened(gaps())) {
            feed(h, record(10, T0));
            feedDead(h, deadLine(11, T0 + S));
            snapshot = h.snapshot(1, 0);
        }
        try (var h = gaps()) {
            h.initializeState(snapshot);
            h.open();
            feed(h, record(12, T0 + 2 * S));
            h.processWatermark(T0 + 40 * S);
            List<Alert> out = h.extractOutputValues();
            assertEquals(
                    List.of("dead_letter"),
                    out.stream().map(a -> a.gapClass).collect(Collectors.toList()));
            assertEquals(
                    List.of(),
                    alerts(h).stream().filter(id -> id.endsWith("/0")).collect(Collectors.toList()),
                    "record 10 is no start record: no restart");
        }
        var late = deadLine(3, T0);
        late.stage = io.auditpipe.flink.records.DeadLetter.STAGE_STATS;
        assertEquals(
                null,
                RecordGaps.deadLettered(late),
                "a record too late for the stats is stored all the same");
        var nameless = deadLine(3, T0);
        nameless.server = null;
        assertEquals(null, RecordGaps.deadLettered(nameless));
    }

    /**
     * The collector's report of lines lost after record {@code n}: its value is that line, its key
     * says {@code lost}.
     */
    static io.auditpipe.flink.records.DeadLetter lostAfter(long n, long at) {
        byte[] line =
                ("{\"audit_record\":{\"name\":\"Query\",\"record\":\""
                                + n
                                + "_2026-11-22T09:00:00\",\"timestamp\":"
                                + "\"2026-11-22T09:00:01 UTC\"}}")
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] key =
                "{\"v\":1,\"server\":\"db-01\",\"format\":\"percona-json\",\"lost\":{\"problem\":\"rotated-away\",\"file\":\"/var/lib/mysql/audit.log.02\"}}"
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        var read =
                new io.auditpipe.reader.RecordReader(new io.auditpipe.enrich.ComplianceSettings())
                        .read(key, line, at);
        assertTrue(read.failure() != null, "a report of lost lines is no event");
        var d =
                io.auditpipe.flink.records.DeadLetter.of(
                        read.failure().stage(),
                        read.failure().reason(),
                        key,
                        line,
                        new io.auditpipe.flink.records.KafkaOrigin("audit.raw", 0, 900 + n, at));
        d.server = "db-01";
        return d;
    }

    @Test
    void aReportOfLostLinesThatArrivesBeforeItsSequencesRecordsLeavesThemTheirPlace()
            throws Exception {
        // The report names the last line shipped before the loss; the records up to it come on the
        // other input of the union and may arrive after it: they are the sequence's beginning, not
        // copies.
        try (var h = opened(gaps())) {
            feedDead(h, lostAfter(3, T0 + 2 * S));
            feed(
                    h,
                    start(T0),
                    record(2, T0 + S),
                    record(3, T0 + S),
                    record(9, T0 + 3 * S),
                    record(10, T0 + 60 * S));
            h.processWatermark(T0 + 100 * S);
            List<Alert> out = h.extractOutputValues();
            assertEquals(
                    List.of(
                            "record_gap/db-01/2026-11-22T09:00:00/0",
                            "record_gap/db-01/2026-11-22T09:00:00/4"),
                    alerts(h),
                    "the restart of record 1, and the lost lines 4 to 8");
            assertEquals(
                    List.of("restart", "collector_loss"),
                    out.stream().map(a -> a.gapClass).collect(Collectors.toList()));
            h.snapshot(1, 1);
            assertEquals(1, h.numKeyedStateEntries());
            assertEquals(0, h.numEventTimeTimers());
        }
    }

    @Test
    void aGapAfterTheCollectorsReportOfLostLinesIsItsLossAndNoOtherIs() throws Exception {
        org.apache.flink.runtime.checkpoint.OperatorSubtaskState snapshot;
        var report = lostAfter(20, T0 + 2 * S);
        assertEquals("collect", report.stage);
        assertTrue(
                report.reason.startsWith("the collector lost the lines written after this one"),
                report.reason);
        assertTrue(report.reason.contains("audit.log.02"), report.reason);
        try (var h = opened(gaps())) {
            feed(h, record(19, T0), record(20, T0 + S));
            // the collector's own line after the loss may come first...
            feed(h, record(31, T0 + 3 * S));
            feedDead(h, report); // ...its report after it: the gap is not yet alerted
            snapshot = h.snapshot(1, 0);
        }
        try (var h = gaps()) {
            h.initializeState(snapshot);
            h.open();
            feed(h, record(32, T0 + 4 * S), record(34, T0 + 5 * S)); // 33 simply missing
            h.processWatermark(T0 + 100 * S);
            List<Alert> out = h.extractOutputValues();
            assertEquals(
                    List.of(
                            "record_gap/db-01/2026-11-22T09:00:00/21",
                            "record_gap/db-01/2026-11-22T09:00:00/33"),
                    alerts(h));
            assertEquals(
                    List.of("collector_loss", "high"),
                    List.of(out.get(0).gapClass, out.get(0).severity));
            assertTrue(
                    out.get(0).summary.startsWith("10 records, 21 to 30, are missing"),
                    out.get(0).summary);
            assertTrue(
                    out.get(0)
                            .summary
                            .contains("dead letter collect:audit.raw/0/920 holds record 20"),
                    out.get(0).summary);
            assertEquals(
                    "unexplained",
                    out.get(1).gapClass,
                    "the report explains the gap right after its line only");
            // the report went with its gap: what stays is the next number
            h.snapshot(2, 1);
            assertEquals(1, h.numKeyedStateEntries());
            assertEquals(0, h.numEventTimeTimers());
        }
        try (var h = opened(gaps())) {
            feed(h, record(19, T0), record(20, T0 + S));
            feedDead(h, lostAfter(20, T0 + 2 * S));
            feed(
                    h,
                    record(21, T0 + 3 * S),
                    record(23, T0 + 4 * S)); // nothing was lost after 20 after all; 22 is
            h.processWatermark(T0 + 100 * S);
            assertEquals(
                    List.of("unexplained"),
                    h.extractOutputValues().stream()
                            .map(a -> a.gapClass)
                            .collect(Collectors.toList()),
                    "a report whose line the sequence went on from explains no later gap");
        }
    }
}
