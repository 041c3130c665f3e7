package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.flink.functions.CountEvents;
import io.auditpipe.flink.functions.EarlyFiringEventTimeTrigger;
import io.auditpipe.flink.functions.EmitCountRow;
import io.auditpipe.flink.functions.StatsKeySelector;
import io.auditpipe.flink.records.StatsEvent;
import io.auditpipe.flink.records.StatsKey;
import io.auditpipe.flink.records.StatsRow;
import io.auditpipe.parser.AuditEvent;
import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.runtime.operators.windowing.WindowOperatorBuilder;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The one-minute stats window as the job configures it (tumbling event-time minute, the
 * early-firing trigger, allowed lateness, late events to the side output), in a keyed harness:
 * early firings emit full counts, late events within the lateness update their minute (one firing
 * per early-fire interval, and at the latest when the minute's state is dropped), later ones go to
 * the side output, and state and timers drop back to zero when the minute can no longer change.
 */
class StatsWindowTest {
    private static final long T0 = Fixtures.T0.toEpochMilli();
    private static final Duration EARLY = Duration.ofSeconds(2);
    private static final Duration LATENESS = Duration.ofMinutes(2);
    private static final long MINUTE_END = T0 + 60_000 - 1; // the window's max timestamp

    private KeyedOneInputStreamOperatorTestHarness<StatsKey, StatsEvent, StatsRow> harness;
    private int seq;

    @BeforeEach
    void setUp() throws Exception {
        WindowOperatorBuilder<StatsEvent, StatsKey, TimeWindow> builder =
                new WindowOperatorBuilder<>(
                        TumblingEventTimeWindows.of(AuditPipeline.STATS_WINDOW),
                        new EarlyFiringEventTimeTrigger(EARLY),
                        new ExecutionConfig(),
                        TypeInformation.of(StatsEvent.class),
                        new StatsKeySelector(),
                        TypeInformation.of(StatsKey.class));
        builder.allowedLateness(LATENESS);
        builder.sideOutputLateData(AuditPipeline.TOO_LATE_FOR_STATS);
        OneInputStreamOperator<StatsEvent, StatsRow> op =
                builder.aggregate(new CountEvents.OfStats(), EmitCountRow.stats(null), Types.LONG);
        harness =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        op, new StatsKeySelector(), TypeInformation.of(StatsKey.class));
        harness.setProcessingTime(0);
        harness.open();
    }

    @AfterEach
    void tearDown() throws Exception {
        harness.close();
    }

    private void event(long at) throws Exception {
        AuditEvent e = new AuditEvent();
        e.id = "db-01/" + (++seq);
        e.server = "db-01";
        e.user = "app";
        e.eventName = "Query";
        e.commandClass = "select";
        e.status = 0;
        e.eventTimeMillis = at;
        harness.processElement(new StreamRecord<>(StatsEvent.of(Fixtures.read(e, seq, at)), at));
    }

    private List<Long> counts() {
        return Fixtures.counts(harness);
    }

    @Test
    void firesEarlyWithTheFullCountSoFar() throws Exception {
        event(T0 + 1_000);
        event(T0 + 2_000);
        assertEquals(List.of(), counts(), "nothing before the early-fire interval");
        harness.setProcessingTime(EARLY.toMillis());
        assertEquals(List.of(2L), counts());
        event(T0 + 3_000);
        harness.setProcessingTime(2 * EARLY.toMillis());
        assertEquals(List.of(3L), counts(), "the full count, never an increment");
        harness.processWatermark(MINUTE_END);
        assertEquals(List.of(3L), counts(), "and once more when the minute closes");
    }

    @Test
    void lateEventsWithinTheLatenessUpdateTheirMinuteOncePerEarlyFireInterval() throws Exception {
        event(T0 + 1_000);
        harness.processWatermark(MINUTE_END);
        assertEquals(List.of(1L), counts());
        harness.processWatermark(MINUTE_END + 30_000);
        for (int i = 0; i < 50; i++) {
            event(T0 + 5_000 + i);
        }
        assertEquals(List.of(), counts(), "not a firing per late event");
        harness.setProcessingTime(EARLY.toMillis());
        assertEquals(List.of(51L), counts(), "one firing with the full count");
        event(T0 + 6_000);
        harness.setProcessingTime(2 * EARLY.toMillis());
        assertEquals(List.of(52L), counts());
        assertTrue(
                harness.getSideOutput(AuditPipeline.TOO_LATE_FOR_STATS) == null
                        || harness.getSideOutput(AuditPipeline.TOO_LATE_FOR_STATS).isEmpty());
    }

    @Test
    void aLateEventsFiringStillDueWhenItsMinuteIsDroppedHappensThen() throws Exception {
        event(T0 + 1_000);
        harness.processWatermark(MINUTE_END);
        assertEquals(List.of(1L), counts());
        harness.processWatermark(MINUTE_END + LATENESS.toMillis() - 1);
        // late by almost the whole lateness: the watermark passes it before the timer
        event(T0 + 5_000);
        harness.processWatermark(MINUTE_END + LATENESS.toMillis());
        assertEquals(List.of(2L), counts(), "counted before the state went");
        assertEquals(0, harness.numKeyedStateEntries(), "window state dropped back to zero");
        assertEquals(0, harness.numProcessingTimeTimers(), "its early-fire timer went with it");
        harness.setProcessingTime(EARLY.toMillis());
        assertEquals(List.of(), counts(), "and nothing fires after");
    }

    @Test
    void anEventPastTheLatenessGoesToTheSideOutputAndStateIsGone() throws Exception {
        event(T0 + 1_000);
        harness.processWatermark(MINUTE_END + LATENESS.toMillis());
        assertEquals(List.of(1L), counts());
        assertEquals(0, harness.numKeyedStateEntries(), "window state dropped back to zero");
        assertEquals(0, harness.numEventTimeTimers(), "event-time timers dropped back to zero");
        assertEquals(
                0,
                harness.numProcessingTimeTimers(),
                "processing-time timers dropped back to zero");
        event(T0 + 2_000);
        assertEquals(List.of(), counts(), "not counted");
        assertEquals(
                1,
                harness.getSideOutput(AuditPipeline.TOO_LATE_FOR_STATS).size(),
                "reported as too late");
    }
}
