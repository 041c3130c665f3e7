package io.auditpipe.flink.alerts;

import static io.auditpipe.flink.Harnesses.opened;
import static io.auditpipe.flink.alerts.AlertRulesTest.alerts;
import static io.auditpipe.flink.alerts.AlertRulesTest.feed;
import static io.auditpipe.flink.alerts.AlertRulesTest.feedDead;
import static io.auditpipe.flink.alerts.AlertRulesTest.gaps;
import static io.auditpipe.flink.alerts.AlertRulesTest.lostAfter;
import static io.auditpipe.flink.alerts.AlertRulesTest.record;
import static io.auditpipe.flink.alerts.AlertRulesTest.start;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * A sequence's beginning that arrives after its later records ({@link RecordGaps}), and one missing
 * after an earlier sequence ({@link SequenceStarts}).
 */
class SequenceStartsTest {
    private static final long S = 1000;
    private static final long T0 = AlertRulesTest.T0;

    /**
     * What the gap rule told {@link SequenceStarts}, as "lowest number, start?" or "lost after N,
     * taken?".
     */
    private static List<String> notices(
            KeyedOneInputStreamOperatorTestHarness<String, RecordGaps.Numbered, Alert> h) {
        var out = h.getSideOutput(RecordGaps.NOTICES);
        return out == null
                ? List.of()
                : out.stream()
                        .map(
                                r -> {
                                    SequenceStarts.Notice n = r.getValue();
                                    return n.lost
                                            ? "lost after " + n.number + (n.taken ? ", taken" : "")
                                            : n.number + (n.start ? ", start" : "");
                                })
                        .collect(Collectors.toList());
    }

    @Test
    void aBeginningThatArrivesAfterLaterRecordsIsCheckedAndItsStartIsARestart() throws Exception {
        org.apache.flink.runtime.checkpoint.OperatorSubtaskState snapshot;
        try (var h = opened(gaps())) {
            feed(
                    h,
                    record(500, T0 + 10 * S),
                    record(501, T0 + 11 * S)); // the live file's lines first...
            snapshot = h.snapshot(1, 0); // ...a checkpoint while the sequence opens...
        }
        try (var h = gaps()) {
            h.initializeState(snapshot);
            h.open();
            feed(h, start(T0)); // ...then the rotated files: 1 to 499, but 250
            for (long n = 2; n < 500; n++) {
                if (n != 250) feed(h, record(n, T0 + n * 10));
            }
            feed(h, record(502, T0 + 12 * S));
            h.processWatermark(T0 + 10 * S + 30 * S - 1);
            assertEquals(List.of(), alerts(h), "the beginning has its grace to arrive");
            h.processWatermark(T0 + 10 * S + 30 * S);
            List<Alert> out = h.extractOutputValues();
            assertEquals(
                    List.of(
                            "record_gap/db-01/2026-11-22T09:00:00/0",
                            "record_gap/db-01/2026-11-22T09:00:00/250"),
                    alerts(h));
            assertEquals(
                    List.of("restart", "unexplained"),
                    List.of(out.get(0).gapClass, out.get(1).gapClass));
            assertTrue(out.get(1).summary.startsWith("record 250 is missing"), out.get(1).summary);
            assertEquals(List.of("db-01/251_2026-11-22T09:00:00"), out.get(1).evidence);
            assertEquals(List.of("1, start"), notices(h));
            // the beginning went with its timer: what stays is the next number
            h.snapshot(2, 1);
            assertEquals(1, h.numKeyedStateEntries());
            assertEquals(0, h.numEventTimeTimers());
        }
    }

    @Test
    void aLongBeginningIsAFewRunsNotARecordEach() throws Exception {
        try (var h = opened(gaps())) {
            feed(h, record(20_001, T0 + 30 * S));
            for (long n = 20_000; n > 10_000; n--)
                feed(h, record(n, T0 + 20 * S)); // backwards, even
            for (long n = 2; n <= 10_000; n++) feed(h, record(n, T0 + 10 * S));
            h.snapshot(1, 0);
            RecordGaps.Runs runs = new RecordGaps.Runs();
            for (long n : new long[] {5, 7, 6, 9, 4, 5}) runs.add(n, "r" + n, n);
            assertEquals(List.of(4L, 9L), runs.lows);
            assertEquals(List.of(7L, 9L), runs.highs);
            assertEquals(List.of("r4", "r9"), runs.ids, "each run names its lowest record");
            h.processWatermark(T0 + 60 * S);
            assertEquals(
                    List.of(),
                    alerts(h),
                    "2 to 20,001 arrived, however out of order: no gap; no start record");
            assertEquals(List.of("2"), notices(h));
        }
    }

    @Test
    void aSequenceFirstSeenInItsMiddleOpensForItsGraceAndTellsItsLowestNumber() throws Exception {
        try (var h = opened(gaps())) {
            feed(h, record(100, T0), record(101, T0 + S), record(103, T0 + 2 * S));
            h.processWatermark(T0 + 40 * S);
            assertEquals(
                    List.of("record_gap/db-01/2026-11-22T09:00:00/102"),
                    alerts(h),
                    "the opening holds no other gap back");
            assertEquals(List.of("100"), notices(h));
            // a record below the lowest after the grace is a copy or given up on: no gap below 100
            feed(h, record(50, T0 + 41 * S));
            h.processWatermark(T0 + 100 * S);
            assertEquals(1, alerts(h).size());
            assertEquals(0, h.numEventTimeTimers());
        }
        try (var h = opened(gaps())) {
            feed(h, start(T0), record(2, T0 + S));
            assertEquals(
                    List.of("1, start"),
                    notices(h),
                    "a sequence from its start record is told at once");
            assertEquals(0, h.numEventTimeTimers());
        }
    }

    @Test
    void deadLettersAndALossInTheBeginningClassifyItsGaps() throws Exception {
        try (var h = opened(gaps())) {
            feed(h, record(30, T0 + 3 * S));
            feed(h, start(T0), record(2, T0 + S / 2));
            feedDead(
                    h,
                    AlertRulesTest.deadLine(
                            3, T0 + S)); // 3 is a dead letter: 2 to 4 is no gap of its own
            feed(h, record(4, T0 + 2 * S));
            feedDead(h, lostAfter(4, T0 + 2 * S)); // 5 to 29 are the collector's loss
            h.processWatermark(T0 + 40 * S);
            List<Alert> out = h.extractOutputValues();
            assertEquals(
                    List.of("restart", "dead_letter", "collector_loss"),
                    out.stream().map(a -> a.gapClass).collect(Collectors.toList()));
            assertTrue(
                    out.get(2).summary.startsWith("25 records, 5 to 29, are missing"),
                    out.get(2).summary);
            assertEquals(List.of("lost after 4", "lost after 4, taken", "1, start"), notices(h));
        }
    }

    static KeyedOneInputStreamOperatorTestHarness<String, SequenceStarts.Notice, Alert> starts()
            throws Exception {
        return new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new SequenceStarts()), n -> n.server, Types.STRING);
    }

    private static void tell(
            KeyedOneInputStreamOperatorTestHarness<String, SequenceStarts.Notice, Alert> h,
            SequenceStarts.Notice... notices)
            throws Exception {
        for (var n : notices) h.processElement(new StreamRecord<>(n, n.eventTimeMillis));
    }

    private static SequenceStarts.Notice begins(
            String server, String startup, long lowest, boolean start) {
        return SequenceStarts.Notice.begins(
                server + "\u0000" + startup,
                lowest,
                start,
                server + "/" + lowest + "_" + startup,
                T0);
    }

    @Test
    void aNewSequenceMissingItsBeginningAfterAnEarlierOneIsAGapTheFirstIsNot() throws Exception {
        org.apache.flink.runtime.checkpoint.OperatorSubtaskState snapshot;
        try (var h = opened(starts())) {
            tell(
                    h,
                    begins(
                            "db-01",
                            "2026-11-20T08:00:00",
                            4000,
                            false)); // the first the job sees: read from its middle
            tell(h, begins("db-02", "2026-11-21T08:00:00", 1, true));
            assertEquals(List.of(), alerts(h));
            snapshot = h.snapshot(1, 0);
        }
        try (var h = starts()) {
            h.initializeState(snapshot);
            h.open();
            tell(h, begins("db-01", "2026-11-22T08:00:00", 1, true)); // a restart: nothing missing
            tell(
                    h,
                    begins(
                            "db-01",
                            "2026-11-23T08:00:00",
                            7,
                            false)); // a restart whose first 6 records are gone
            tell(
                    h,
                    begins(
                            "db-01",
                            "2026-11-19T08:00:00",
                            9,
                            false)); // an older sequence (an import): no restart after it
            List<Alert> out = h.extractOutputValues();
            assertEquals(List.of("record_gap/db-01/2026-11-23T08:00:00/1"), alerts(h));
            assertEquals(
                    List.of("unexplained", "high"),
                    List.of(out.get(0).gapClass, out.get(0).severity));
            assertTrue(
                    out.get(0)
                            .summary
                            .startsWith(
                                    "6 records, 1 to 6, are missing from the audit trail of db-01 (sequence"
                                            + " started 2026-11-23T08:00:00): the numbering started again after the sequence started"
                                            + " 2026-11-22T08:00:00, and its lowest record to arrive is 7"),
                    out.get(0).summary);
            assertEquals(List.of("db-01/7_2026-11-23T08:00:00"), out.get(0).evidence);
            assertEquals(
                    2,
                    h.numKeyedStateEntries(),
                    "a server's newest sequence, for its life; no timer");
            assertEquals(0, h.numEventTimeTimers());
        }
    }

    @Test
    void aLossAfterTheNewestSequencesLastLineExplainsTheNextOnesMissingBeginning()
            throws Exception {
        try (var h = opened(starts())) {
            tell(h, begins("db-01", "2026-11-22T08:00:00", 1, true));
            tell(
                    h,
                    SequenceStarts.Notice.lost(
                            "db-01\u00002026-11-22T08:00:00",
                            900,
                            "collect:audit.raw/0/77",
                            T0,
                            false));
            tell(h, begins("db-01", "2026-11-23T08:00:00", 40, false));
            // a loss a gap of its own sequence took explains nothing after it
            tell(
                    h,
                    SequenceStarts.Notice.lost(
                            "db-01\u00002026-11-23T08:00:00",
                            95,
                            "collect:audit.raw/0/78",
                            T0,
                            false));
            tell(
                    h,
                    SequenceStarts.Notice.lost(
                            "db-01\u00002026-11-23T08:00:00", 95, "record_gap/x", T0, true));
            tell(h, begins("db-01", "2026-11-24T08:00:00", 3, false));
            List<Alert> out = h.extractOutputValues();
            assertEquals(
                    List.of("collector_loss", "unexplained"),
                    out.stream().map(a -> a.gapClass).collect(Collectors.toList()));
            assertTrue(
                    out.get(0).summary.startsWith("39 records, 1 to 39, are missing"),
                    out.get(0).summary);
            assertTrue(
                    out.get(0)
                            .summary
                            .contains(
                                    "lost after record 900 of the sequence started 2026-11-22T08:00:00"
                                            + " (its dead letter collect:audit.raw/0/77)"),
                    out.get(0).summary);
            assertTrue(
                    out.get(1).summary.startsWith("2 records, 1 to 2, are missing"),
                    out.get(1).summary);
        }
    }
}
