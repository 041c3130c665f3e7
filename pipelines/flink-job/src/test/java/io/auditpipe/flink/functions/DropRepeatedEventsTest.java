package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.parser.AuditEvent;

import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link DropRepeatedEvents} in a keyed harness: copies dropped, state gone once the minute is closed. */
class DropRepeatedEventsTest {
    private static final long T0 = Instant.parse("2026-11-22T10:00:00Z").toEpochMilli();
    private static final Duration LATENESS = Duration.ofMinutes(2);

    private KeyedOneInputStreamOperatorTestHarness<String, IngestedEvent, IngestedEvent> harness;

    @BeforeEach
    void setUp() throws Exception {
        harness = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new DropRepeatedEvents(Duration.ofMinutes(1), LATENESS)),
                new EventIdSelector(), org.apache.flink.api.common.typeinfo.Types.STRING);
        harness.open();
    }

    @AfterEach
    void tearDown() throws Exception {
        harness.close();
    }

    private static StreamRecord<IngestedEvent> event(String id, long at, long offset) {
        return event(id, at, offset, "digest-of-" + id);
    }

    private static StreamRecord<IngestedEvent> event(String id, long at, long offset, String lineSha256) {
        AuditEvent e = new AuditEvent();
        e.id = id;
        e.server = "db-01";
        e.format = "percona-json";
        e.recordId = id.substring(id.indexOf('/') + 1);
        e.eventName = "Query";
        e.eventTimeMillis = at;
        return new StreamRecord<>(new IngestedEvent(e, new KafkaOrigin("audit.raw", 0, offset, at), lineSha256), at);
    }

    private List<String> passed() {
        return harness.extractOutputValues().stream().map(e -> e.event.id + "@" + e.origin.offset).collect(Collectors.toList());
    }

    @Test
    void passesTheFirstCopyOfEachIdOnly() throws Exception {
        harness.processElement(event("db-01/1", T0 + 1_000, 0));
        harness.processElement(event("db-01/2", T0 + 2_000, 1));
        harness.processElement(event("db-01/1", T0 + 1_000, 2)); // re-sent by the collector
        harness.processElement(event("db-01/2", T0 + 2_000, 3));
        harness.processElement(event("db-01/3", T0 + 61_000, 4));
        assertEquals(List.of("db-01/1@0", "db-01/2@1", "db-01/3@4"), passed());
        assertEquals(6, harness.numKeyedStateEntries(), "two entries per id: when to forget it, its first digest");
        assertEquals(3, harness.numEventTimeTimers());
    }

    @Test
    void remembersAnIdUntilItsMinuteCanNoLongerChange() throws Exception {
        harness.processElement(event("db-01/1", T0 + 1_000, 0));
        long closes = T0 + 60_000 - 1 + LATENESS.toMillis(); // window max timestamp + allowed lateness
        harness.processWatermark(closes - 1);
        harness.processElement(event("db-01/1", T0 + 1_000, 1)); // still within the lateness: not counted again
        assertEquals(List.of("db-01/1@0"), passed());
        assertEquals(2, harness.numKeyedStateEntries());

        harness.processWatermark(closes);
        assertEquals(0, harness.numKeyedStateEntries(), "state dropped back to zero");
        assertEquals(0, harness.numEventTimeTimers(), "timers dropped back to zero");
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
        harness.processElement(event("db-01/1", T0 + 2_000, 2, "bbbb")); // another record under the same id
        assertEquals(List.of("db-01/1@0"), passed(), "counted once, the collision not at all");
        var collisions = harness.getSideOutput(DropRepeatedEvents.COLLISIONS);
        assertEquals(1, collisions.size());
        DeadLetter d = collisions.peek().getValue();
        assertEquals("collision:db-01/1:bbbb", d.id, "the same id the store-side check uses");
        assertEquals(DeadLetter.STAGE_STORE, d.stage);
        assertTrue(d.reason.startsWith("id collision") && d.reason.contains("aaaa") && d.reason.contains("bbbb"), d.reason);
        assertTrue(new String(d.originalValue, java.nio.charset.StandardCharsets.UTF_8).contains("\"line_sha256\": \"bbbb\""));
    }
}
