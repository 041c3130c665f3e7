package io.auditpipe.flink.sessions;

import static io.auditpipe.flink.Harnesses.assertClearedAt;
import static io.auditpipe.flink.Harnesses.opened;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.enrich.Enricher;
import io.auditpipe.flink.functions.WriteBackOperator;
import io.auditpipe.parser.AuditEvent;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * The session builder in Flink's operator test harness: each way a session ends, its emissions, the
 * bound on what it keeps, a restore from a snapshot, and its state and timer cleared once it ends.
 */
class SessionBuilderTest {
    static final long T0 = Instant.parse("2026-11-28T10:00:00Z").toEpochMilli();
    static final long S = 1000;
    static final long IDLE = 1800 * S;
    static final long REFRESH = 60 * S;
    static final ComplianceSettings COMPLIANCE =
            ComplianceSettings.fromProperties(
                    Map.of("compliance.data-class.pci_cardholder.tables", "shop.cards"));
    static int seq;

    static AuditEvent event(
            String name, long connection, String user, long at, Integer status, String sql) {
        AuditEvent e = new AuditEvent();
        e.id = "db-01/" + (++seq) + "_2026-11-28T00:00:00";
        e.server = "db-01";
        e.eventName = name;
        e.connectionId = connection;
        e.user = user;
        e.host = "app-7";
        e.ip = "10.0.0.7";
        e.db = "shop";
        e.status = status;
        e.sqltext = sql;
        e.eventTimeMillis = at;
        if ("Connect".equals(name))
            e.authOutcome = status == 0 ? AuditEvent.AUTH_SUCCESS : AuditEvent.AUTH_FAILURE;
        try (Enricher enricher = new Enricher(COMPLIANCE)) {
            return enricher.enrich(e);
        }
    }

    static AuditEvent login(long connection, String user, long at) {
        return event("Connect", connection, user, at, 0, null);
    }

    static AuditEvent query(long connection, String user, long at, String sql) {
        return event("Query", connection, user, at, 0, sql);
    }

    static AuditEvent quit(long connection, String user, long at) {
        return event("Quit", connection, user, at, 0, null);
    }

    static KeyedOneInputStreamOperatorTestHarness<String, SessionEvent, Session> harness(
            int maxTables) throws Exception {
        return new KeyedOneInputStreamOperatorTestHarness<>(
                new WriteBackOperator<>(new SessionBuilder(IDLE, REFRESH, maxTables)),
                SessionBuilder::key,
                Types.STRING);
    }

    static void feed(
            KeyedOneInputStreamOperatorTestHarness<String, SessionEvent, Session> h,
            AuditEvent... events)
            throws Exception {
        for (AuditEvent e : events)
            h.processElement(new StreamRecord<>(SessionEvent.of(e), e.eventTimeMillis));
    }

    static List<String> emitted(
            KeyedOneInputStreamOperatorTestHarness<String, SessionEvent, Session> h) {
        return h.extractOutputValues().stream()
                .map(s -> s.id + " " + (s.end == null ? "open" : s.end) + " " + s.records)
                .collect(Collectors.toList());
    }

    static Session last(KeyedOneInputStreamOperatorTestHarness<String, SessionEvent, Session> h) {
        List<Session> out = h.extractOutputValues();
        return out.get(out.size() - 1);
    }

    @Test
    void aLoginItsStatementsAndItsLogoutAreOneSessionThenItsStateIsGone() throws Exception {
        try (var h = opened(harness(100))) {
            feed(
                    h,
                    login(5, "app", T0),
                    query(5, "app", T0 + S, "SELECT pan FROM shop.cards"),
                    query(5, "app", T0 + 2 * S, "UPDATE shop.orders SET x = 1"),
                    event("Query", 5, "app", T0 + 3 * S, 1146, "SELECT * FROM shop.gone"),
                    login(6, "bob", T0 + 3 * S),
                    quit(5, "app", T0 + 10 * S));
            String id = "db-01/5/" + T0;
            assertEquals(
                    List.of(
                            id + " open 1",
                            "db-01/6/" + (T0 + 3 * S) + " open 1",
                            id + " logout 5"),
                    emitted(h));
            Session s = last(h);
            assertEquals("app", s.user);
            assertEquals("10.0.0.7", s.ip);
            assertEquals("shop", s.db);
            assertEquals(T0, s.loginMillis);
            assertEquals(AuditEvent.AUTH_SUCCESS, s.loginOutcome);
            assertEquals(T0 + 10 * S, s.logoutMillis);
            assertEquals(10 * S, s.durationMillis());
            assertEquals(1, s.failures, "the statement the server refused");
            assertEquals(List.of("shop.cards", "shop.gone", "shop.orders"), s.tables);
            assertEquals(List.of("pci_cardholder"), s.dataClasses);
            assertEquals(
                    Map.of("authentication", 2L, "data_read", 2L, "data_write", 1L), s.categories);
            h.snapshot(1, 0); // the sessions of the interval written into the state
            assertEquals(1, h.numKeyedStateEntries(), "connection 6 is still open: its state only");
            assertEquals(1, h.numEventTimeTimers(), "and its timer");
            h.processWatermark(T0 + 3 * S + IDLE);
            h.snapshot(2, 0);
            assertEquals(0, h.numKeyedStateEntries(), "every session ended: no state left");
            assertEquals(0, h.numEventTimeTimers(), "and no timer");
        }
    }

    @Test
    void aFailedLoginIsASessionThatEndsAtOnce() throws Exception {
        try (var h = opened(harness(100))) {
            feed(h, event("Connect", 9, "mallory", T0, 1045, null));
            assertEquals(List.of("db-01/9/" + T0 + " failed_login 1"), emitted(h));
            assertEquals(AuditEvent.AUTH_FAILURE, last(h).loginOutcome);
            assertClearedAt(h, 1);
        }
    }

    @Test
    void anIdleSessionEndsWhenTheWatermarkPassesItsLastRecordAndTheIdleTime() throws Exception {
        try (var h = opened(harness(100))) {
            feed(h, login(5, "app", T0), query(5, "app", T0 + 10 * S, "SELECT 1"));
            h.processWatermark(T0 + 10 * S + IDLE - 1);
            assertEquals(
                    List.of("db-01/5/" + T0 + " open 1", "db-01/5/" + T0 + " open 2"),
                    emitted(h),
                    "refreshed once a minute of event time after it changed, not yet idle");
            h.processWatermark(T0 + 10 * S + IDLE);
            assertEquals("db-01/5/" + T0 + " idle 2", emitted(h).get(2));
            assertNull(last(h).logoutMillis);
            assertEquals(10 * S, last(h).durationMillis(), "to its last record");
            assertClearedAt(h, 1);
        }
    }

    @Test
    void aBusySessionIsRefreshedAtMostOnceARefreshOfEventTime() throws Exception {
        try (var h = opened(harness(100))) {
            feed(h, login(5, "app", T0));
            for (int i = 1; i <= 300; i++) {
                feed(h, query(5, "app", T0 + i * S, "SELECT 1"));
                h.processWatermark(T0 + i * S); // the watermark following the records
            }
            // emitted at the login, then at 60, 120, 180, 240 and 300 s of event time
            assertEquals(6, h.extractOutputValues().size(), emitted(h).toString());
            assertEquals(301, last(h).records);
            assertEquals(
                    1, h.numEventTimeTimers(), "one timer for the session, never one per record");
        }
    }

    @Test
    void recordsWithoutTheirLoginAreASessionWithoutOneAndALaterLoginStartsAnother()
            throws Exception {
        try (var h = opened(harness(100))) {
            feed(
                    h,
                    query(5, "app", T0, "SELECT 1"),
                    query(5, "app", T0 + S, "SELECT 2"),
                    login(5, "eve", T0 + 5 * S));
            List<Session> out = h.extractOutputValues();
            assertEquals(
                    List.of(
                            "db-01/5/" + T0 + " open 1",
                            "db-01/5/" + T0 + " superseded 2",
                            "db-01/5/" + (T0 + 5 * S) + " open 1"),
                    emitted(h));
            assertNull(out.get(1).loginMillis, "its login is not among the records");
            assertEquals("eve", last(h).user);
            feed(h, login(5, "carol", T0 + 9 * S));
            assertEquals(
                    "db-01/5/" + (T0 + 5 * S) + " superseded 1",
                    emitted(h).get(3),
                    "a second login on the connection id: the server numbers connections again");
        }
    }

    @Test
    void tablesAreBoundedAndTheRestCounted() throws Exception {
        try (var h = opened(harness(2))) {
            feed(h, login(5, "app", T0));
            for (int i = 0; i < 5; i++)
                feed(h, query(5, "app", T0 + S, "SELECT * FROM shop.t" + i));
            feed(
                    h,
                    query(5, "app", T0 + 2 * S, "SELECT * FROM shop.t0"),
                    quit(5, "app", T0 + 3 * S));
            assertEquals(List.of("shop.t0", "shop.t1"), last(h).tables);
            assertEquals(3, last(h).moreTables);
        }
    }

    @Test
    void eventsWithoutAConnectionIdBelongToNoSession() throws Exception {
        AuditEvent e = query(5, "app", T0, "SELECT 1");
        e.connectionId = null;
        assertNull(SessionEvent.of(e));
        e.connectionId = 0L;
        assertNull(
                SessionEvent.of(e), "the server's own records (connection 0) belong to no session");
        assertEquals(
                "sessions.idle-timeout: must be positive",
                assertThrows(
                                IllegalArgumentException.class,
                                () -> new SessionBuilder(0, REFRESH, 10))
                        .getMessage());
        assertEquals(
                "sessions.max-tables: must not be negative",
                assertThrows(
                                IllegalArgumentException.class,
                                () -> new SessionBuilder(IDLE, REFRESH, -1))
                        .getMessage());
    }

    @Test
    void aRestoreFromASnapshotEmitsTheSameSessions() throws Exception {
        AuditEvent[] before = {login(5, "app", T0), query(5, "app", T0 + S, "SELECT 1")};
        AuditEvent[] after = {query(5, "app", T0 + 2 * S, "SELECT 2"), quit(5, "app", T0 + 3 * S)};
        OperatorSubtaskState snapshot;
        List<String> first;
        try (var h = opened(harness(100))) {
            feed(h, before);
            snapshot = h.snapshot(1, 0);
            feed(h, after);
            first = emitted(h);
            first = first.subList(1, first.size());
        }
        try (var h = harness(100)) {
            h.initializeState(snapshot);
            h.open();
            feed(h, after); // replayed after the checkpoint
            assertEquals(first, emitted(h));
            assertEquals(
                    4,
                    last(h).records,
                    "the records before the snapshot counted once, from the state");
            assertClearedAt(h, 2);
        }
    }

    /**
     * The layout of four values per connection that the builder kept before {@link OpenSession}:
     * written as it wrote them.
     */
    static final class FormerLayout
            extends org.apache.flink.streaming.api.functions.KeyedProcessFunction<
                    String, SessionEvent, Session> {
        @Override
        public void processElement(
                SessionEvent e, Context ctx, org.apache.flink.util.Collector<Session> out)
                throws Exception {
            var rc = getRuntimeContext();
            Session s = new Session();
            s.server = e.server;
            s.connectionId = e.connectionId;
            s.id = e.server + "/" + e.connectionId + "/" + e.eventTimeMillis;
            s.firstMillis = s.lastMillis = s.loginMillis = e.eventTimeMillis;
            s.loginOutcome = AuditEvent.AUTH_SUCCESS;
            s.user = e.user;
            s.records = 1;
            rc.getState(
                            new org.apache.flink.api.common.state.ValueStateDescriptor<>(
                                    "session", Session.class))
                    .update(s);
            long timer = e.eventTimeMillis + IDLE;
            ctx.timerService().registerEventTimeTimer(timer);
            rc.getState(
                            new org.apache.flink.api.common.state.ValueStateDescriptor<>(
                                    "session-timer", Long.class))
                    .update(timer);
            rc.getState(
                            new org.apache.flink.api.common.state.ValueStateDescriptor<>(
                                    "session-emitted-records", Long.class))
                    .update(1L);
            rc.getState(
                            new org.apache.flink.api.common.state.ValueStateDescriptor<>(
                                    "session-emitted-at", Long.class))
                    .update(e.eventTimeMillis);
        }
    }

    @Test
    void aSessionOfTheFormerLayoutGoesOnAfterARestoreAndItsFourValuesAreCleared() throws Exception {
        OperatorSubtaskState snapshot;
        try (var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new org.apache.flink.streaming.api.operators.KeyedProcessOperator<>(
                                new FormerLayout()),
                        SessionBuilder::key,
                        Types.STRING)) {
            h.open();
            feed(h, login(5, "app", T0), login(6, "bob", T0));
            snapshot = h.snapshot(1, 0);
        }
        try (var h = harness(100)) {
            h.initializeState(snapshot);
            h.open();
            assertEquals(8, h.numKeyedStateEntries(), "two connections of four values each");
            feed(h, query(5, "app", T0 + S, "SELECT 1"), quit(5, "app", T0 + 2 * S));
            assertEquals(
                    List.of("db-01/5/" + T0 + " logout 3"),
                    emitted(h),
                    "the login's session, ended by its logout");
            h.processWatermark(T0 + IDLE); // connection 6's former timer: idle
            assertEquals("db-01/6/" + T0 + " idle 1", emitted(h).get(1));
            h.snapshot(2, 0);
            assertEquals(
                    0, h.numKeyedStateEntries(), "moved over and cleared, and both sessions ended");
            assertEquals(0, h.numEventTimeTimers());
        }
    }

    @Test
    void whatCrossesTheShuffleIsAFlinkPojoAndSurvivesItsSerializer() throws Exception {
        var info = org.apache.flink.api.common.typeinfo.TypeInformation.of(SessionEvent.class);
        assertEquals(org.apache.flink.api.java.typeutils.PojoTypeInfo.class, info.getClass());
        SessionEvent sent = SessionEvent.of(query(5, "app", T0, "SELECT pan FROM shop.cards"));
        var serializer =
                info.createSerializer(
                        new org.apache.flink.api.common.serialization.SerializerConfigImpl());
        var out = new org.apache.flink.core.memory.DataOutputSerializer(256);
        serializer.serialize(sent, out);
        SessionEvent back =
                serializer.deserialize(
                        new org.apache.flink.core.memory.DataInputDeserializer(
                                out.getCopyOfBuffer()));
        assertEquals(List.of("shop.cards"), back.tables);
        assertEquals(List.of("pci_cardholder"), back.dataClasses);
        assertEquals(sent.key(), back.key());
        assertEquals(sent.category, back.category);
    }
}
