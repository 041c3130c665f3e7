package io.auditpipe.flink.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.flink.document.EventDocument;
import io.auditpipe.flink.functions.WriteBackOperator;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.flink.sink.StoreDocuments;
import io.auditpipe.parser.AuditEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ChainEvents} in a keyed harness: copies dropped, state gone once the minute is closed,
 * links and heads.
 */
class ChainEventsTest {
    private static final long T0 = Instant.parse("2026-11-22T10:00:00Z").toEpochMilli();
    private static final Duration LATENESS = Duration.ofMinutes(2);
    private static final Duration HEAD_INTERVAL = Duration.ofMinutes(1);

    protected KeyedOneInputStreamOperatorTestHarness<String, IngestedEvent, IngestedEvent> harness;

    @BeforeEach
    void setUp() throws Exception {
        harness = newHarness();
        harness.open();
    }

    /** The heap state backend here; {@link OnRocksDb} runs every test on RocksDB. */
    protected boolean rocksDb() {
        return false;
    }

    /**
     * The same tests on the RocksDB state backend, whose map iterates in key order (the job's
     * default).
     */
    static class OnRocksDb extends ChainEventsTest {
        @Override
        protected boolean rocksDb() {
            return true;
        }
    }

    /** The ids the server's chain remembers, read from its state as a checkpoint holds it. */
    /** The harness's first-copies map of {@code server}, by the time to forget each id. */
    private MapState<RememberedId, Long> rememberedIds(String server) throws Exception {
        harness.getOperator().getKeyedStateBackend().setCurrentKey(server);
        return state(
                new MapStateDescriptor<>(
                        "first-copies-by-time",
                        RememberedId.Serializer.INSTANCE,
                        org.apache.flink.api.common.typeutils.base.LongSerializer.INSTANCE));
    }

    private int remembered(String server) throws Exception {
        harness.snapshot(++checkpoint, checkpoint);
        MapState<RememberedId, Long> map = rememberedIds(server);
        int n = 0;
        for (var ignored : map.keys()) n++;
        return n;
    }

    /** Keyed state entries (a map is one); the RocksDB backend does not count them, so -1 there. */
    private int stateEntries() {
        return rocksDb() ? -1 : harness.numKeyedStateEntries();
    }

    /**
     * Keyed state entries as a checkpoint holds them: the chain's tip is written into state before
     * one.
     */
    private void assertStateEntries(int expected, String message) throws Exception {
        harness.snapshot(++checkpoint, checkpoint);
        if (!rocksDb()) assertEquals(expected, stateEntries(), message);
    }

    private long checkpoint = 100;

    private KeyedOneInputStreamOperatorTestHarness<String, IngestedEvent, IngestedEvent>
            newHarness() throws Exception {
        return newHarness(null);
    }

    private KeyedOneInputStreamOperatorTestHarness<String, IngestedEvent, IngestedEvent> newHarness(
            String chain) throws Exception {
        return chainHarness(chain, rocksDb());
    }

    /** A harness of the chain operator, its state on RocksDB or on the heap. */
    private static KeyedOneInputStreamOperatorTestHarness<String, IngestedEvent, IngestedEvent>
            chainHarness(String chain, boolean rocksDb) throws Exception {
        var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new WriteBackOperator<>(
                                new ChainEvents(
                                        Duration.ofMinutes(1),
                                        LATENESS,
                                        HEAD_INTERVAL,
                                        chain,
                                        ChainKeys.NONE,
                                        rocksDb)),
                        new ServerOfEvent(),
                        org.apache.flink.api.common.typeinfo.Types.STRING);
        if (rocksDb)
            h.setStateBackend(new org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend());
        return h;
    }

    @AfterEach
    void tearDown() throws Exception {
        harness.close();
    }

    static StreamRecord<IngestedEvent> event(String id, long at, long offset) {
        return event(id, at, offset, "digest-of-" + id);
    }

    private static StreamRecord<IngestedEvent> event(
            String id, long at, long offset, String lineSha256) {
        AuditEvent e = new AuditEvent();
        e.id = id;
        e.server = "db-01";
        e.format = "percona-json";
        e.recordId = id.substring(id.indexOf('/') + 1);
        e.eventName = "Query";
        e.eventTimeMillis = at;
        return new StreamRecord<>(
                new IngestedEvent(e, new KafkaOrigin("audit.raw", 0, offset, at), lineSha256), at);
    }

    private List<String> passed() {
        return harness.extractOutputValues().stream()
                .map(e -> e.event.id + "@" + e.origin.offset)
                .collect(Collectors.toList());
    }

    /** The operator's keyed state of {@code descriptor}, under the key its backend is set to. */
    private <S extends org.apache.flink.api.common.state.State> S state(
            org.apache.flink.api.common.state.StateDescriptor<S, ?> descriptor) throws Exception {
        return harness.getOperator()
                .getKeyedStateBackend()
                .getPartitionedState(
                        VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, descriptor);
    }

    @Test
    void passesTheFirstCopyOfEachIdOnly() throws Exception {
        harness.processElement(event("db-01/1", T0 + 1_000, 0));
        harness.processElement(event("db-01/2", T0 + 2_000, 1));
        harness.processElement(event("db-01/1", T0 + 1_000, 2)); // re-sent by the collector
        harness.processElement(event("db-01/2", T0 + 2_000, 3));
        harness.processElement(event("db-01/3", T0 + 61_000, 4));
        assertEquals(List.of("db-01/1@0", "db-01/2@1", "db-01/3@4"), passed());
        assertEquals(2, harness.numEventTimeTimers(), "one per minute to forget");
    }

    @Test
    void remembersAnIdUntilItsMinuteCanNoLongerChange() throws Exception {
        harness.processElement(event("db-01/1", T0 + 1_000, 0));
        long closes =
                T0 + 60_000 - 1 + LATENESS.toMillis(); // window max timestamp + allowed lateness
        harness.processWatermark(closes - 1);
        harness.processElement(
                event("db-01/1", T0 + 1_000, 1)); // still within the lateness: not counted again
        assertEquals(List.of("db-01/1@0"), passed());

        int chainEntries =
                // the chain's own: its tip (last link, its digest, event id and time, when the next
                // head is due)
                1;
        assertStateEntries(chainEntries + 1, "and the remembered ids");
        assertEquals(1, remembered("db-01"));
        harness.processWatermark(closes);
        assertEquals(0, harness.numEventTimeTimers(), "timers dropped back to zero");
        assertStateEntries(chainEntries, "the remembered ids dropped; the chain goes on");
        assertEquals(0, remembered("db-01"));
    }

    @Test
    void aCopyAfterTheMinuteClosedPassesToBeReportedTooLateByTheWindow() throws Exception {
        harness.processElement(event("db-01/1", T0 + 1_000, 0));
        harness.processWatermark(T0 + 60_000 - 1 + LATENESS.toMillis());
        harness.processElement(event("db-01/1", T0 + 1_000, 1));
        assertEquals(List.of("db-01/1@0", "db-01/1@1"), passed());
    }

    @Test
    void aDifferentLineWithAnIdAlreadySeenIsACollisionNotACopy() throws Exception {
        harness.processElement(event("db-01/1", T0 + 1_000, 0, "aaaa"));
        harness.processElement(event("db-01/1", T0 + 1_000, 1, "aaaa")); // a copy
        harness.processElement(
                event("db-01/1", T0 + 2_000, 2, "bbbb")); // another record under the same id
        assertEquals(List.of("db-01/1@0"), passed(), "counted once, the collision not at all");
        var collisions = harness.getSideOutput(ChainEvents.COLLISIONS);
        assertEquals(1, collisions.size());
        DeadLetter d = collisions.peek().getValue();
        assertEquals("collision:db-01/1:bbbb", d.id, "the same id the store-side check uses");
        assertEquals(DeadLetter.STAGE_STORE, d.stage);
        assertTrue(
                d.reason.startsWith("id collision")
                        && d.reason.contains("another line_sha256")
                        && d.reason.contains("bbbb"),
                d.reason);
        assertTrue(
                new String(d.originalValue, java.nio.charset.StandardCharsets.UTF_8)
                        .contains("\"line_sha256\": \"bbbb\""));
    }

    @Test
    void idsRememberedTheFormerWayAreMovedOverAfterARestore() throws Exception {
        // checkpoints of versions before FirstCopies hold a MapState "first-copies": id -> (forget
        // at, digest)
        var backend = harness.getOperator().getKeyedStateBackend();
        backend.setCurrentKey("db-01");
        MapState<String, Tuple2<Long, String>> former =
                state(
                        new MapStateDescriptor<>(
                                "first-copies",
                                Types.STRING,
                                Types.TUPLE(Types.LONG, Types.STRING)));
        former.put("db-01/1", Tuple2.of(T0 + 60_000 - 1 + LATENESS.toMillis(), "aaaa"));
        harness.processElement(
                event("db-01/1", T0 + 1_000, 5, "aaaa")); // a copy of an id remembered before
        harness.processElement(event("db-01/1", T0 + 1_000, 6, "bbbb")); // a collision with it
        harness.processElement(event("db-01/2", T0 + 2_000, 7));
        assertEquals(List.of("db-01/2@7"), passed());
        assertEquals(1, harness.getSideOutput(ChainEvents.COLLISIONS).size());
        backend.setCurrentKey("db-01");
        assertFalse(former.iterator().hasNext(), "moved over, then cleared");
    }

    @Test
    void theLayoutBeforeTheTipIsMovedOverAfterARestore() throws Exception {
        // checkpoints of the version before ChainTip: the chain's position in five values, the ids
        // in a FirstCopies
        var backend = harness.getOperator().getKeyedStateBackend();
        backend.setCurrentKey("db-01");
        var seq = state(new ValueStateDescriptor<>("chain-seq", Types.LONG));
        var digest = state(new ValueStateDescriptor<>("chain-digest", Types.STRING));
        var copies =
                state(
                        new ValueStateDescriptor<>(
                                "first-copies-hashed", FirstCopies.Serializer.INSTANCE));
        seq.update(7L);
        digest.update("d7");
        FirstCopies former = new FirstCopies();
        FirstCopies.IdHasher h = new FirstCopies.IdHasher();
        h.hash("db-01/1");
        former.add(h.high, h.low, h.line("aaaa"), T0 + 60_000 - 1 + LATENESS.toMillis());
        copies.update(former);
        harness.processElement(
                event("db-01/1", T0 + 1_000, 5, "aaaa")); // a copy of an id remembered before
        harness.processElement(event("db-01/2", T0 + 2_000, 6));
        List<IngestedEvent> linked = out();
        assertEquals(1, linked.size());
        assertEquals(8L, linked.get(0).chainSeq, "the chain goes on from where it stood");
        assertEquals(
                EventChain.link("d7", EventDocument.of(linked.get(0))), linked.get(0).chainDigest);
        backend.setCurrentKey("db-01");
        assertEquals(null, seq.value(), "moved over, then cleared");
        assertEquals(null, copies.value());
    }

    @Test
    void forgetsExactlyWhatIsDueWhateverTheOrderTheMinutesCameIn() throws Exception {
        int minutes = 5;
        int perMinute = 300;
        for (int i = 0; i < minutes * perMinute; i++) {
            int minute = (i * 7) % minutes; // interleaved, not in time order
            harness.processElement(event("db-01/" + i, T0 + minute * 60_000L + i % 60 * 1_000, i));
        }
        assertEquals(minutes * perMinute, remembered("db-01"));
        for (int m = 0; m < minutes; m++) {
            harness.processWatermark(T0 + (m + 1) * 60_000L - 1 + LATENESS.toMillis());
            assertEquals((minutes - m - 1) * perMinute, remembered("db-01"), "after minute " + m);
            for (int i = 0;
                    i < minutes * perMinute;
                    i += 37) { // what remains is still known as seen
                int minute = (i * 7) % minutes;
                if (minute > m)
                    harness.processElement(
                            event(
                                    "db-01/" + i,
                                    T0 + minute * 60_000L + i % 60 * 1_000,
                                    10_000 + i));
            }
            assertEquals(minutes * perMinute, out().size(), "no copy passed");
        }
        assertEquals(0, harness.numEventTimeTimers());
        assertStateEntries(1, "the tip alone");
    }

    private static final String STARTUP = "2026-11-22T09:00:00";

    /** Percona's numbered record n of the sequence started at {@link #STARTUP}. */
    private static StreamRecord<IngestedEvent> numbered(long n, long at, long offset) {
        return event("db-01/" + n + "_" + STARTUP, at, offset, "line-" + n + "-" + at);
    }

    /** The server's numbered runs as a checkpoint holds them (null: none). */
    private NumberedRuns runs(String server) throws Exception {
        harness.snapshot(++checkpoint, checkpoint);
        var backend = harness.getOperator().getKeyedStateBackend();
        backend.setCurrentKey(server);
        return state(
                        new ValueStateDescriptor<>(
                                "first-copies-numbered", NumberedRuns.Serializer.INSTANCE))
                .value();
    }

    @Test
    void numberedRecordsAreRememberedAsRunsNotAnIdEach() throws Exception {
        int n = 3_000;
        for (int i = 1; i <= n; i++) {
            harness.processElement(numbered(i, T0 + i * 40L, i)); // two minutes of records
            if (i % 100 == 0)
                harness.processElement(
                        numbered(i - 50, T0 + (i - 50) * 40L, 100_000 + i)); // re-sent
        }
        assertEquals(n, out().size(), "each record once");
        assertEquals(0, remembered("db-01"), "no id in the map");
        assertEquals(1, runs("db-01").runs(), "one run");
        assertStateEntries(2, "the tip and the runs");
        harness.processWatermark(T0 + n * 40L + 60_000 + LATENESS.toMillis());
        assertEquals(0, harness.numEventTimeTimers());
        assertEquals(0, runs("db-01").runs(), "forgotten with the minutes");
        harness.processElement(numbered(5, T0 + 200, 200_000));
        assertEquals(
                n + 1,
                out().size(),
                "a copy later than its minute's lateness passes, as an id's does");
    }

    @Test
    void numbersOutOfOrderAreEachPassedOnceAndTheirRunsMerge() throws Exception {
        long[] order = {1, 2, 3, 10, 11, 7, 4, 12, 5, 6, 9, 8, 13};
        for (int i = 0; i < order.length; i++)
            harness.processElement(numbered(order[i], T0 + order[i] * 1_000, i));
        assertEquals(1, runs("db-01").runs(), "one run once every number between came");
        for (int i = 0; i < order.length; i++)
            harness.processElement(numbered(order[i], T0 + order[i] * 1_000, 100 + i));
        List<String> expected = new java.util.ArrayList<>();
        for (int i = 0; i < order.length; i++)
            expected.add("db-01/" + order[i] + "_" + STARTUP + "@" + i);
        assertEquals(
                expected,
                passed(),
                "each number's first copy, in the order they came; the copies dropped");
    }

    @Test
    void aNumberingStartedAgainUnderTheSameStartupTimeIsACollisionNotACopy() throws Exception {
        for (int i = 1; i <= 5; i++) harness.processElement(numbered(i, T0 + i * 1_000, i));
        harness.processElement(
                numbered(2, T0 + 30_000, 10)); // the server restarted: number 2 again, later
        assertEquals(5, out().size());
        var collisions = harness.getSideOutput(ChainEvents.COLLISIONS);
        assertEquals(1, collisions.size());
        assertEquals(
                "collision:db-01/2_" + STARTUP + ":line-2-" + (T0 + 30_000),
                collisions.peek().getValue().id);
    }

    @Test
    void runsSurviveACheckpointAndTheRestore() throws Exception {
        for (int i = 1; i <= 1_000; i++) harness.processElement(numbered(i, T0 + i * 10L, i));
        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        for (int i = 1_001; i <= 2_000; i++) harness.processElement(numbered(i, T0 + i * 10L, i));
        harness.close();

        harness = newHarness();
        harness.initializeState(snapshot);
        harness.open();
        for (int i = 1; i <= 2_000; i++) harness.processElement(numbered(i, T0 + i * 10L, i));
        List<IngestedEvent> after = out();
        assertEquals(
                1_000,
                after.size(),
                "the numbers before the checkpoint are copies, the ones after it are new");
        assertEquals("db-01/1001_" + STARTUP, after.get(0).event.id);
    }

    @Test
    void numbersPastTheRunsBoundAreRememberedByTheirIdsAndTheirCopiesFound() throws Exception {
        int runs = NumberedRuns.MAX_RUNS;
        for (int i = 0; i < runs; i++)
            harness.processElement(numbered(2L * i, T0 + 1_000, i)); // a run each
        long past = 2L * runs + 1; // one run more: by its id
        harness.processElement(numbered(past, T0 + 2_000, runs));
        harness.processElement(numbered(past, T0 + 2_000, runs + 1)); // its copy
        harness.processElement(numbered(3, T0 + 1_000, runs + 2)); // joins two runs: room for it
        assertEquals(runs + 2, out().size(), "each once");
        assertEquals(1, remembered("db-01"), "the one past the bound in the map");
        assertEquals(runs - 1, runs("db-01").runs());
        assertEquals(
                T0 + 60_000 - 1 + LATENESS.toMillis(),
                runs("db-01").mapUntil,
                "looked up there until it is forgotten");
        harness.processWatermark(T0 + 60_000 - 1 + LATENESS.toMillis());
        assertEquals(0, remembered("db-01"));
        assertEquals(0, runs("db-01").runs());
        assertEquals(0, harness.numEventTimeTimers());
    }

    @Test
    void numberedIdsRememberedInTheMapBeforeTheRunsAreFoundThereUntilForgotten() throws Exception {
        // a checkpoint taken before the runs: a chain with links, and numbered ids in the map
        harness.processElement(event("db-01/x", T0 + 1_000, 0)); // a link, so the chain has a tip
        long forgetAt = T0 + 60_000 - 1 + LATENESS.toMillis();
        MapState<RememberedId, Long> map = rememberedIds("db-01");
        FirstCopies.IdHasher ids = new FirstCopies.IdHasher();
        ids.hash("db-01/7_" + STARTUP);
        map.put(new RememberedId(forgetAt, ids.high, ids.low), ids.line("line-7-" + (T0 + 7_000)));
        harness.snapshot(1L, 1L);
        OperatorSubtaskState snapshot = harness.snapshot(2L, 2L);
        harness.close();
        harness = newHarness();
        harness.initializeState(snapshot);
        harness.open();

        harness.processElement(numbered(7, T0 + 7_000, 1)); // a copy of an id in the map
        harness.processElement(numbered(8, T0 + 8_000, 2));
        assertEquals(List.of("db-01/8_" + STARTUP + "@2"), passed());
        assertEquals(
                Long.MAX_VALUE,
                runs("db-01").mapUntil,
                "looked up in the map until a forgetting says until when");
        harness.processWatermark(T0 + 5_000);
        assertEquals(Long.MAX_VALUE, runs("db-01").mapUntil, "no timer due yet");
        harness.processWatermark(forgetAt);
        assertEquals(
                Long.MIN_VALUE, runs("db-01").mapUntil, "the map is empty: no more look-ups there");
    }

    @Test
    void aCheckpointKeepsWhatWasRememberedWhenItWasTaken() throws Exception {
        for (int i = 0; i < 20_000; i++) harness.processElement(event("db-01/" + i, T0 + 1_000, i));
        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        for (int i = 20_000; i < 40_000; i++)
            harness.processElement(event("db-01/" + i, T0 + 2_000, i));
        harness.close();

        harness = newHarness();
        harness.initializeState(snapshot);
        harness.open();
        for (int i = 0; i < 40_000; i++)
            harness.processElement(event("db-01/" + i, T0 + 2_000, 40_000 + i));
        List<IngestedEvent> after = out();
        assertEquals(
                20_000,
                after.size(),
                "the ids before the checkpoint are copies, the ones after it are new");
        assertEquals("db-01/20000", after.get(0).event.id);
    }

    @Test
    void aCanonicalSavepointOfTheHeapBackendRestoresOnRocksDbWhereItsCheckpointDoesNot()
            throws Exception {
        // how a job on the heap backend moves to RocksDB: a savepoint in Flink's canonical format
        var heap = chainHarness(null, false);
        heap.open();
        heap.processElement(event("db-01/1", T0 + 1_000, 0));
        heap.processElement(event("db-01/2", T0 + 61_000, 1));
        OperatorSubtaskState checkpoint = heap.snapshot(1L, 1L);
        OperatorSubtaskState savepoint =
                heap.snapshotWithLocalState(
                                2L,
                                2L,
                                org.apache.flink.runtime.checkpoint.SavepointType.savepoint(
                                        org.apache.flink.core.execution.SavepointFormatType
                                                .CANONICAL))
                        .getJobManagerOwnedState();
        List<IngestedEvent> before = heap.extractOutputValues();
        heap.close();

        var fromCheckpoint = chainHarness(null, true);
        Exception refused =
                org.junit.jupiter.api.Assertions.assertThrows(
                        Exception.class, () -> fromCheckpoint.initializeState(checkpoint));
        assertTrue(
                String.valueOf(refused.getCause())
                        .contains("Could not restore keyed state backend"),
                String.valueOf(refused.getCause()));
        fromCheckpoint.close();
        var rocks = chainHarness(null, true);
        rocks.initializeState(savepoint);
        rocks.open();
        rocks.processElement(event("db-01/1", T0 + 1_000, 2)); // a copy: still remembered
        rocks.processElement(event("db-01/3", T0 + 62_000, 3));
        List<IngestedEvent> after = rocks.extractOutputValues();
        assertEquals(
                List.of("db-01/3"),
                after.stream().map(e -> e.event.id).collect(Collectors.toList()));
        assertEquals(3L, after.get(0).chainSeq);
        assertEquals(
                EventChain.link(before.get(1).chainDigest, EventDocument.of(after.get(0))),
                after.get(0).chainDigest);
        assertEquals(2, rocks.numEventTimeTimers(), "the timers to forget came along");
        rocks.processWatermark(T0 + 120_000 - 1 + LATENESS.toMillis());
        assertEquals(0, rocks.numEventTimeTimers());
        rocks.close();
    }

    private List<IngestedEvent> out() {
        return harness.extractOutputValues();
    }

    @Test
    void linksEachFirstCopyAfterThePreviousOne() throws Exception {
        harness.processElement(event("db-01/1", T0 + 1_000, 0));
        harness.processElement(event("db-01/1", T0 + 1_000, 1)); // a copy takes no link
        harness.processElement(event("db-01/2", T0 + 2_000, 2));
        List<IngestedEvent> linked = out();
        assertEquals(
                List.of(1L, 2L), linked.stream().map(e -> e.chainSeq).collect(Collectors.toList()));
        IngestedEvent first = linked.get(0);
        IngestedEvent second = linked.get(1);
        assertEquals(
                EventChain.link("", EventDocument.of(first)),
                first.chainDigest,
                "the first link follows the empty digest; the chain fields themselves are not covered");
        assertEquals(
                EventChain.link(first.chainDigest, EventDocument.of(second)), second.chainDigest);
        assertEquals(2L, EventDocument.of(second).get(EventDocument.SEQ_FIELD));
        assertEquals(second.chainDigest, EventDocument.of(second).get(EventDocument.DIGEST_FIELD));
    }

    @Test
    void theStoreSinkGetsTheDocumentTheLinkWasComputedOn() throws Exception {
        // the operator sets it on the record it emits, the very object a chained sink receives with
        // object reuse (the harness hands the operator our object but copies what it emits, so read
        // it on ours)
        List<IngestedEvent> sent = new java.util.ArrayList<>();
        for (int i = 1; i <= 2; i++) {
            StreamRecord<IngestedEvent> r = event("db-01/" + i, T0 + i * 1_000, i);
            sent.add(r.getValue());
            harness.processElement(r);
        }
        for (IngestedEvent e : sent) {
            org.bson.Document built = e.document;
            e.document = null;
            org.bson.Document fromFields = EventDocument.of(e);
            assertEquals(fromFields, built, "built once, the same document");
            assertEquals(
                    List.copyOf(fromFields.keySet()),
                    List.copyOf(built.keySet()),
                    "in the same field order");
            e.document = built;
            org.bson.Document inserted =
                    ((com.mongodb.client.model.InsertOneModel<org.bson.Document>)
                                    StoreDocuments.eventInsert(e))
                            .getDocument(); // with its BSON (sink.EncodedDocument)
            assertEquals(built, new org.bson.Document(inserted), "what the store sink inserts");
            assertEquals(
                    List.copyOf(built.keySet()),
                    List.copyOf(inserted.keySet()),
                    "in the same field order");
        }
    }

    @Test
    void writesAHeadAtMostOncePerIntervalWhenTheChainGrew() throws Exception {
        harness.setProcessingTime(0);
        harness.processElement(event("db-01/1", T0 + 1_000, 0));
        harness.processElement(event("db-01/2", T0 + 2_000, 1));
        assertEquals(null, harness.getSideOutput(ChainEvents.HEADS));
        harness.setProcessingTime(HEAD_INTERVAL.toMillis());
        harness.processElement(event("db-01/3", T0 + 3_000, 2));
        harness.setProcessingTime(2 * HEAD_INTERVAL.toMillis());
        harness.setProcessingTime(5 * HEAD_INTERVAL.toMillis()); // nothing new: no head
        List<ChainHead> heads =
                harness.getSideOutput(ChainEvents.HEADS).stream()
                        .map(r -> r.getValue())
                        .collect(Collectors.toList());
        assertEquals(
                List.of("db-01/2", "db-01/3"),
                heads.stream().map(ChainHead::id).collect(Collectors.toList()));
        assertEquals(out().get(1).chainDigest, heads.get(0).digest);
        assertEquals("db-01/2", heads.get(0).lastEventId);
        assertEquals(out().get(2).chainDigest, heads.get(1).digest);
        assertEquals(0, harness.numProcessingTimeTimers());
    }

    @Test
    void aRestoredChainGivesEveryReplayedEventTheLinkItHadBefore() throws Exception {
        harness.processElement(event("db-01/1", T0 + 1_000, 0));
        OperatorSubtaskState snapshot = harness.snapshot(1L, 1L);
        harness.processElement(event("db-01/2", T0 + 2_000, 1));
        harness.processElement(event("db-01/3", T0 + 3_000, 2));
        List<IngestedEvent> before = out();
        harness.close();

        harness = newHarness();
        harness.initializeState(snapshot);
        harness.open();
        harness.processElement(
                event("db-01/1", T0 + 1_000, 0)); // replayed from the checkpoint: still remembered
        harness.processElement(event("db-01/2", T0 + 2_000, 1));
        harness.processElement(event("db-01/3", T0 + 3_000, 2));
        List<IngestedEvent> after = out();
        assertEquals(2, after.size());
        for (int i = 0; i < 2; i++) {
            assertEquals(before.get(i + 1).chainSeq, after.get(i).chainSeq);
            assertEquals(before.get(i + 1).chainDigest, after.get(i).chainDigest);
        }
    }

    @Test
    void serversHaveChainsOfTheirOwn() throws Exception {
        harness.processElement(event("db-01/1", T0 + 1_000, 0));
        StreamRecord<IngestedEvent> other = event("db-02/1", T0 + 1_000, 1);
        other.getValue().event.server = "db-02";
        harness.processElement(other);
        assertEquals(
                List.of(1L, 1L), out().stream().map(e -> e.chainSeq).collect(Collectors.toList()));
    }

    @Test
    void importedHistoryIsLinkedInItsOwnChainWhoseLastHeadComesAtTheEndOfInput() throws Exception {
        harness.close();
        harness = newHarness("import-x");
        harness.open();
        harness.setProcessingTime(0);
        harness.processElement(event("db-01/1", T0 + 1_000, 0));
        harness.processElement(event("db-01/2", T0 + 2_000, 1));
        List<IngestedEvent> linked = out();
        assertEquals(
                List.of("import-x", "import-x"),
                linked.stream().map(e -> e.chain).collect(Collectors.toList()));
        assertEquals(
                List.of(1L, 2L), linked.stream().map(e -> e.chainSeq).collect(Collectors.toList()));
        assertEquals(
                "import-x",
                io.auditpipe.flink.document.EventDocument.of(linked.get(0)).getString("chain"));
        // the same event in the live chain has another digest: an event cannot be moved between
        // chains unseen
        ChainEvents live = new ChainEvents(Duration.ofMinutes(1), LATENESS, HEAD_INTERVAL);
        // (a KeyedProcessOperator is enough here: nothing is snapshotted)
        KeyedOneInputStreamOperatorTestHarness<String, IngestedEvent, IngestedEvent> liveHarness =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new KeyedProcessOperator<>(live),
                        new ServerOfEvent(),
                        org.apache.flink.api.common.typeinfo.Types.STRING);
        liveHarness.open();
        liveHarness.processElement(event("db-01/1", T0 + 1_000, 0));
        assertNotEquals(
                liveHarness.extractOutputValues().get(0).chainDigest, linked.get(0).chainDigest);
        liveHarness.close();

        assertEquals(null, harness.getSideOutput(ChainEvents.HEADS));
        harness.processWatermark(
                Long.MAX_VALUE); // the end of a bounded input, before any head interval
        List<ChainHead> heads =
                harness.getSideOutput(ChainEvents.HEADS).stream()
                        .map(r -> r.getValue())
                        .collect(Collectors.toList());
        assertEquals(
                List.of("db-01/import-x/2"),
                heads.stream().map(ChainHead::id).collect(Collectors.toList()));
        assertEquals("import-x", heads.get(0).chain);
        assertEquals(linked.get(1).chainDigest, heads.get(0).digest);
        assertEquals(
                0,
                harness.numEventTimeTimers(),
                "every id forgotten and the last head written: no timer left");
        assertStateEntries(
                2, "the chain's end remains (its tip and the last head's link); no id does");
        assertEquals(0, remembered("db-01"));
    }
}
