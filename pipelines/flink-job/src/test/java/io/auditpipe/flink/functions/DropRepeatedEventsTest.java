package io.auditpipe.flink.functions;

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
        AuditEvent e = new AuditEvent();
        e.id = id;
        e.server = "db-01";
        e.eventTimeMillis = at;
        return new StreamRecord<>(new IngestedEvent(e, new KafkaOrigin("audit.raw", 0, offset, at), "digest"), at);
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
        assertEquals(3, harness.numKeyedStateEntries());
        assertEquals(3, harness.numEventTimeTimers());
    }

    @Test
    void remembersAnIdUntilItsMinuteCanNoLongerChange() throws Exception {
        harness.processElement(event("db-01/1", T0 + 1_000, 0));
        long closes = T0 + 60_000 - 1 + LATENESS.toMillis(); // window max timestamp + allowed lateness
        harness.processWatermark(closes - 1);
        harness.processElement(event("db-01/1", T0 + 1_000, 1)); // still within the lateness: not counted again
        assertEquals(List.of("db-01/1@0"), passed());
        assertEquals(1, harness.numKeyedStateEntries());

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
}
