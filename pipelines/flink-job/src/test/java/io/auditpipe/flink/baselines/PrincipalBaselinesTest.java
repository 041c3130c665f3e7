package io.auditpipe.flink.baselines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.enrich.Enricher;
import io.auditpipe.flink.alerts.Alert;
import io.auditpipe.flink.functions.WriteBackOperator;
import io.auditpipe.parser.AuditEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * The learned baselines in Flink's operator test harness: learning, each rule firing once, a
 * restore from a snapshot, and the state and timer of a principal cleared once it is forgotten.
 */
class PrincipalBaselinesTest {
    static final long H = BaselineSettings.HOUR;
    static final long D = BaselineSettings.DAY;

    /** A Monday, midnight UTC. */
    static final long T0 = Instant.parse("2026-11-02T00:00:00Z").toEpochMilli();

    static final BaselineSettings SETTINGS =
            new BaselineSettings(7 * D, 35 * D, 2, 5, 3.0, 3.0, 20, 3, 100, false);
    static final ComplianceSettings COMPLIANCE =
            ComplianceSettings.fromProperties(
                    Map.of(
                            "compliance.data-class.pci_cardholder.tables", "shop.cards",
                            "compliance.data-class.hipaa_ephi.tables", "clinic.patients",
                            "compliance.principals.administrators", "dba_*"));
    static final ComplianceSettings WITH_BUSINESS_HOURS =
            ComplianceSettings.fromProperties(
                    Map.of(
                            "compliance.data-class.pci_cardholder.tables", "shop.cards",
                            "compliance.principals.administrators", "dba_*",
                            "compliance.business-hours", "* 02:00-05:00 UTC"));
    static int seq;

    static AuditEvent event(String name, String user, String ip, long at, String sql) {
        AuditEvent e = new AuditEvent();
        e.id = "db-01/" + (++seq) + "_2026-11-02T00:00:00";
        e.server = "db-01";
        e.eventName = name;
        e.connectionId = 7L;
        e.user = user;
        e.host = "host-" + ip;
        e.ip = ip;
        e.db = "shop";
        e.status = 0;
        e.sqltext = sql;
        e.eventTimeMillis = at;
        if ("Connect".equals(name)) e.authOutcome = AuditEvent.AUTH_SUCCESS;
        try (Enricher enricher = new Enricher(COMPLIANCE)) {
            return enricher.enrich(e);
        }
    }

    static BaselineEvent query(String user, long at, String sql) {
        return BaselineEvent.of(event("Query", user, "10.0.0.7", at, sql), COMPLIANCE);
    }

    static BaselineEvent login(String user, String ip, long at) {
        return BaselineEvent.of(event("Connect", user, ip, at, null), COMPLIANCE);
    }

    static KeyedOneInputStreamOperatorTestHarness<String, BaselineEvent, Alert> harness()
            throws Exception {
        return harness(SETTINGS);
    }

    static KeyedOneInputStreamOperatorTestHarness<String, BaselineEvent, Alert> harness(
            BaselineSettings settings) throws Exception {
        return opened(new PrincipalBaselines(settings, null));
    }

    static KeyedOneInputStreamOperatorTestHarness<String, BaselineEvent, Alert> opened(
            PrincipalBaselines baselines) throws Exception {
        var h = unopened(baselines);
        h.open();
        return h;
    }

    /** A harness of {@code baselines} whose state a restore may set before it opens. */
    static KeyedOneInputStreamOperatorTestHarness<String, BaselineEvent, Alert> unopened(
            PrincipalBaselines baselines) throws Exception {
        return new KeyedOneInputStreamOperatorTestHarness<>(
                new WriteBackOperator<>(baselines), PrincipalBaselines::key, Types.STRING);
    }

    static void feed(
            KeyedOneInputStreamOperatorTestHarness<String, BaselineEvent, Alert> h,
            List<BaselineEvent> events)
            throws Exception {
        for (BaselineEvent e : events) h.processElement(new StreamRecord<>(e, e.eventTimeMillis));
    }

    static List<String> alerts(
            KeyedOneInputStreamOperatorTestHarness<String, BaselineEvent, Alert> h) {
        return h.extractOutputValues().stream()
                .map(a -> a.rule + " " + a.subject)
                .collect(Collectors.toList());
    }

    /**
     * Working days of a principal: from day {@code from} to day {@code to} (exclusive),
     * 09:00-11:59, {@code perHour} reads of sbtest.
     */
    static List<BaselineEvent> workdays(String user, int from, int to, int perHour) {
        List<BaselineEvent> out = new ArrayList<>();
        for (int d = from; d < to; d++) {
            for (int hour = 9; hour < 12; hour++) {
                for (int i = 0; i < perHour; i++) {
                    out.add(
                            query(
                                    user,
                                    T0 + d * D + hour * H + i * 60_000L,
                                    "SELECT c FROM sbtest.sbtest1 WHERE id=" + i));
                }
            }
        }
        return out;
    }

    @Test
    void nothingFiresWhileABaselineLearns() throws Exception {
        try (var h = harness()) {
            List<BaselineEvent> events = new ArrayList<>(workdays("alice", 0, 3, 10));
            events.add(
                    query(
                            "alice",
                            T0 + 3 * D + 3 * H,
                            "SELECT * FROM shop.cards")); // new table, 03:00
            for (int i = 0; i < 200; i++)
                events.add(query("alice", T0 + 4 * D + 10 * H + i, "SELECT 1"));
            events.add(login("dba_bob", "10.0.0.1", T0));
            events.add(login("dba_bob", "10.9.9.9", T0 + 6 * D));
            feed(h, events);
            assertEquals(List.of(), alerts(h));
        }
    }

    @Test
    void aFirstAccessToAClassifiedTableFiresOnceWithItsClass() throws Exception {
        try (var h = harness()) {
            feed(h, workdays("alice", 0, 8, 5));
            feed(
                    h,
                    List.of(
                            query(
                                    "alice",
                                    T0 + 8 * D + 10 * H,
                                    "SELECT number FROM shop.cards WHERE id=1"),
                            query(
                                    "alice",
                                    T0 + 8 * D + 10 * H + 1000,
                                    "SELECT number FROM shop.cards WHERE id=2")));
            List<Alert> out = h.extractOutputValues();
            assertEquals(1, out.size(), out.toString());
            Alert a = out.get(0);
            assertEquals(PrincipalBaselines.FIRST_ACCESS, a.rule);
            assertTrue(a.summary.contains("shop.cards, pci_cardholder"), a.summary);
            assertEquals(PrincipalBaselines.FIRST_ACCESS + "/" + a.evidence.get(0), a.id);
        }
    }

    @Test
    void anHourItNeverWorksInFiresOncePerClockHour() throws Exception {
        try (var h = harness(SETTINGS)) {
            feed(h, workdays("alice", 0, 8, 5));
            feed(
                    h,
                    List.of(
                            query("alice", T0 + 8 * D + 10 * H, "SELECT 1"), // usual
                            query("alice", T0 + 8 * D + 12 * H, "SELECT 1"), // next to a usual hour
                            query("alice", T0 + 8 * D + 3 * H, "SELECT 1"), // off hours: fires
                            query(
                                    "alice",
                                    T0 + 8 * D + 3 * H + 60_000,
                                    "SELECT 1"))); // same clock hour
            assertEquals(List.of("off_hours alice"), alerts(h));
        }
    }

    @Test
    void byTheBusinessHoursAnHourOutsideThemFiresWithoutLearning() throws Exception {
        BaselineSettings byBusinessHours =
                new BaselineSettings(7 * D, 35 * D, 2, 5, 3.0, 3.0, 20, 3, 100, true);
        try (var h = harness(byBusinessHours)) {
            feed(
                    h,
                    List.of(
                            BaselineEvent.of(
                                    event("Query", "alice", "10.0.0.7", T0 + 3 * H, "SELECT 1"),
                                    WITH_BUSINESS_HOURS),
                            BaselineEvent.of(
                                    event("Query", "alice", "10.0.0.7", T0 + 10 * H, "SELECT 1"),
                                    WITH_BUSINESS_HOURS),
                            BaselineEvent.of(
                                    event(
                                            "Query",
                                            "alice",
                                            "10.0.0.7",
                                            T0 + 10 * H + 1000,
                                            "SELECT 1"),
                                    WITH_BUSINESS_HOURS)));
            assertEquals(
                    List.of("off_hours alice"),
                    alerts(h),
                    "03:00 is inside the business hours 02:00-05:00, 10:00 not");
        }
    }

    @Test
    void anHourFarAboveItsOwnFiresOnceAtTheThreshold() throws Exception {
        try (var h = harness()) {
            feed(h, workdays("alice", 0, 8, 10)); // 24 active hours of 10 records
            List<BaselineEvent> busy = new ArrayList<>();
            for (int i = 0; i < 100; i++)
                busy.add(query("alice", T0 + 8 * D + 10 * H + i * 1000L, "SELECT 1"));
            feed(h, busy);
            List<Alert> out = h.extractOutputValues();
            assertEquals(1, out.size(), out.toString());
            assertEquals(PrincipalBaselines.VOLUME_SPIKE, out.get(0).rule);
            // mean 10, deviation 0: the threshold is max(20 records, 3 x 10, 10 + 3 x 0) = 30, met
            // by the 30th record
            assertEquals(busy.get(29).id, out.get(0).evidence.get(0));
            assertTrue(out.get(0).summary.contains("wrote 30 records"), out.get(0).summary);
        }
    }

    @Test
    void aNewOriginOfAnAdministratorFiresOnceAndOfAPersonNever() throws Exception {
        try (var h = harness()) {
            List<BaselineEvent> events = new ArrayList<>();
            for (int d = 0; d < 8; d++) {
                events.add(login("dba_bob", "10.0.0.1", T0 + d * D + 10 * H));
                events.add(login("alice", "10.0.0.2", T0 + d * D + 10 * H));
            }
            events.add(login("dba_bob", "203.0.113.9", T0 + 8 * D + 10 * H));
            events.add(login("dba_bob", "203.0.113.9", T0 + 8 * D + 11 * H));
            events.add(login("alice", "203.0.113.9", T0 + 8 * D + 10 * H));
            feed(h, events);
            assertEquals(List.of("new_origin dba_bob"), alerts(h));
            assertEquals(
                    PrincipalBaselines.NEW_ORIGIN + "/db-01/dba_bob/203.0.113.9",
                    h.extractOutputValues().get(0).id);
        }
    }

    @Test
    void aRestoredBaselineJudgesAsTheOneItWasTakenFrom() throws Exception {
        List<BaselineEvent> learn = workdays("alice", 0, 8, 10);
        learn.add(login("dba_bob", "10.0.0.1", T0 + 10 * H));
        learn.add(login("dba_bob", "10.0.0.1", T0 + D + 10 * H));
        List<BaselineEvent> judge = new ArrayList<>();
        judge.add(query("alice", T0 + 8 * D + 3 * H, "SELECT * FROM clinic.patients"));
        judge.add(login("dba_bob", "198.51.100.4", T0 + 8 * D + 10 * H));
        List<String> straight;
        try (var h = harness()) {
            feed(h, learn);
            feed(h, judge);
            straight = h.extractOutputValues().stream().map(a -> a.id).collect(Collectors.toList());
        }
        OperatorSubtaskState snapshot;
        try (var h = harness()) {
            feed(h, learn);
            snapshot = h.snapshot(1, 1);
        }
        var restored = unopened(new PrincipalBaselines(SETTINGS, null));
        restored.initializeState(snapshot);
        restored.open();
        feed(restored, judge);
        assertEquals(
                straight,
                restored.extractOutputValues().stream()
                        .map(a -> a.id)
                        .collect(Collectors.toList()));
        assertEquals(
                List.of("first_access", "off_hours", "new_origin"),
                restored.extractOutputValues().stream()
                        .map(a -> a.rule)
                        .collect(Collectors.toList()));
        restored.close();
    }

    @Test
    void aPrincipalWithNoEventForTheForgetTimeIsForgottenStateAndTimer() throws Exception {
        try (var h = harness()) {
            feed(h, workdays("alice", 0, 2, 3));
            feed(h, List.of(login("dba_bob", "10.0.0.1", T0)));
            h.snapshot(1, 1); // the principals of the interval written into the state
            assertEquals(2, h.numKeyedStateEntries() / 2);
            assertEquals(2, h.numEventTimeTimers());
            h.processWatermark(T0 + 30 * D); // bob's 35 days are not over, nor alice's
            assertEquals(2, h.numEventTimeTimers());
            h.processWatermark(T0 + 35 * D);
            assertEquals(1, h.numEventTimeTimers(), "bob forgotten, alice not yet");
            h.processWatermark(T0 + 40 * D);
            h.snapshot(2, 2);
            assertEquals(0, h.numKeyedStateEntries());
            assertEquals(0, h.numEventTimeTimers());
            // a forgotten principal learns again from its next event
            feed(h, List.of(login("dba_bob", "203.0.113.9", T0 + 41 * D)));
            assertEquals(List.of(), alerts(h));
        }
    }

    /** Stored baselines by id, as the store's collection holds them (documents, read back). */
    static final class Stored implements ProfileSeeds {
        static final Map<String, org.bson.Document> DOCUMENTS =
                new java.util.concurrent.ConcurrentHashMap<>();

        @Override
        public void open() {}

        @Override
        public Profile find(String server, String user) {
            org.bson.Document d =
                    DOCUMENTS.get(io.auditpipe.flink.sink.StoreDocuments.baselineId(server, user));
            return d == null ? null : io.auditpipe.flink.sink.StoreDocuments.profileOf(d);
        }

        @Override
        public void close() {}
    }

    @Test
    void importedHistoryLearnsWithoutJudgingAndSeedsTheLiveJobsBaselines() throws Exception {
        Stored.DOCUMENTS.clear();
        List<BaselineEvent> history = new ArrayList<>(workdays("alice", 0, 8, 10));
        history.add(
                query(
                        "alice",
                        T0 + 7 * D + 3 * H,
                        "SELECT * FROM shop.cards")); // judged live, not in history
        history.add(login("dba_bob", "10.0.0.1", T0 + 10 * H));
        history.add(login("dba_bob", "10.0.0.1", T0 + D + 10 * H));
        var imported = opened(PrincipalBaselines.learningOnly(SETTINGS, new Stored()));
        feed(imported, history);
        imported.processWatermark(Long.MAX_VALUE); // the end of the imported input
        assertEquals(List.of(), alerts(imported), "history raises no alert");
        for (var r : imported.getSideOutput(PrincipalBaselines.PROFILES)) {
            org.bson.Document d = io.auditpipe.flink.sink.StoreDocuments.baseline(r.getValue());
            Stored.DOCUMENTS.put(d.getString("_id"), d);
        }
        assertEquals(java.util.Set.of("db-01/alice", "db-01/dba_bob"), Stored.DOCUMENTS.keySet());
        imported.snapshot(1, 1);
        assertEquals(0, imported.numKeyedStateEntries());
        imported.close();

        var live = opened(new PrincipalBaselines(SETTINGS, new Stored()));
        feed(
                live,
                List.of(
                        query(
                                "alice",
                                T0 + 8 * D + 10 * H,
                                "SELECT * FROM shop.cards"), // learned in history
                        query(
                                "alice",
                                T0 + 8 * D + 11 * H,
                                "SELECT * FROM clinic.patients"), // first time
                        login(
                                "dba_bob",
                                "198.51.100.4",
                                // a new origin, bob seeded from 2 days of history
                                T0 + 8 * D + 10 * H),
                        login(
                                "carol",
                                "10.0.0.9",
                                T0 + 8 * D + 3 * H))); // no seed: learns from here
        assertEquals(List.of("first_access alice", "new_origin dba_bob"), alerts(live));
        live.close();

        // a seed older than the forget time is not used: the principal learns again
        var later = opened(new PrincipalBaselines(SETTINGS, new Stored()));
        feed(later, List.of(login("dba_bob", "203.0.113.7", T0 + 40 * D)));
        assertEquals(List.of(), alerts(later));
        later.close();
    }

    @Test
    void theEventKeepsWhatABaselineReadsAndLeavesFailedLoginsOut() {
        AuditEvent failed = event("Connect", "alice", "10.0.0.7", T0, null);
        failed.authOutcome = AuditEvent.AUTH_FAILURE;
        assertNull(BaselineEvent.of(failed, COMPLIANCE));
        AuditEvent own = event("Audit", null, "10.0.0.7", T0, null);
        assertNull(BaselineEvent.of(own, COMPLIANCE));
        BaselineEvent b =
                query("alice", T0, "SELECT * FROM shop.cards JOIN sbtest.sbtest1 USING (id)");
        assertEquals(List.of("shop.cards", "pci_cardholder"), b.objects);
        assertEquals("10.0.0.7", b.origin);
        assertNull(b.afterHours, "no business hours configured");
        assertTrue(login("dba_bob", "10.0.0.1", T0).privileged());
    }

    @Test
    void aBadSettingIsNamed() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                new BaselineSettings(
                                        7 * D, 7 * D, 2, 5, 3.0, 3.0, 20, 3, 100, false));
        assertTrue(e.getMessage().startsWith("alerts.baselines.forget-after:"), e.getMessage());
    }
}
