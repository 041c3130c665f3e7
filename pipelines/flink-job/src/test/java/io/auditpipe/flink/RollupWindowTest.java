package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.model.UpdateOneModel;
import io.auditpipe.flink.functions.CountEvents;
import io.auditpipe.flink.functions.EarlyFiringEventTimeTrigger;
import io.auditpipe.flink.functions.EmitCountRow;
import io.auditpipe.flink.records.RollupKey;
import io.auditpipe.flink.records.RollupRow;
import io.auditpipe.flink.sink.StoreDocuments;
import io.auditpipe.parser.AuditEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
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
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The daily rollups' window as the job configures it (a tumbling event-time UTC day, the
 * early-firing trigger, the stats' allowed lateness), in a keyed harness: early firings write the
 * day's full count, a late event within the lateness updates its day, and state and timers drop
 * back to zero when the day can no longer change. Also which events are counted, and the stored
 * row.
 */
class RollupWindowTest {
    private static final long DAY = Instant.parse("2026-11-22T00:00:00Z").toEpochMilli();
    private static final Duration EARLY = Duration.ofSeconds(2);
    private static final Duration LATENESS = Duration.ofMinutes(15);
    private static final long DAY_END = DAY + 86_400_000L - 1; // the window's max timestamp

    private KeyedOneInputStreamOperatorTestHarness<RollupKey, RollupKey, RollupRow> harness;

    @BeforeEach
    void setUp() throws Exception {
        WindowOperatorBuilder<RollupKey, RollupKey, TimeWindow> builder =
                new WindowOperatorBuilder<>(
                        TumblingEventTimeWindows.of(RollupRow.WINDOW),
                        new EarlyFiringEventTimeTrigger(EARLY),
                        new ExecutionConfig(),
                        TypeInformation.of(RollupKey.class),
                        new RollupKey.Itself(),
                        TypeInformation.of(RollupKey.class));
        builder.allowedLateness(LATENESS);
        OneInputStreamOperator<RollupKey, RollupRow> op =
                builder.aggregate(new CountEvents<>(), EmitCountRow.rollups(null), Types.LONG);
        harness =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        op, new RollupKey.Itself(), TypeInformation.of(RollupKey.class));
        harness.setProcessingTime(0);
        harness.open();
    }

    @AfterEach
    void tearDown() throws Exception {
        harness.close();
    }

    private static AuditEvent event(String principalClass, List<String> controls) {
        AuditEvent e = new AuditEvent();
        e.id = "db-01/1";
        e.server = "db-01";
        e.user = "dba_bob";
        e.principalClass = principalClass;
        e.category = "administration";
        e.action = "set_global";
        e.controls = controls;
        return e;
    }

    private void admin(long at) throws Exception {
        AuditEvent e = event("administrator", List.of("PCI-DSS-10.2.1.2", "SOX-ITGC-ACCESS"));
        e.eventTimeMillis = at;
        harness.processElement(new StreamRecord<>(RollupKey.of(Fixtures.read(e, 1, at)), at));
    }

    private List<Long> counts() {
        return Fixtures.counts(harness);
    }

    @Test
    void countsWhatEvidencesAControlAndWhatAdministratorsDo() {
        assertTrue(RollupKey.counts(event("administrator", null)));
        assertTrue(RollupKey.counts(event("application", List.of("HIPAA-164.312(b)"))));
        assertFalse(RollupKey.counts(event("application", List.of())));
        assertFalse(RollupKey.counts(event(null, null)));
    }

    @Test
    void aDayIsWrittenEarlyWithItsFullCountAndUpdatedByLateEventsUntilItsStateIsGone()
            throws Exception {
        admin(DAY + 3_600_000);
        admin(DAY + 7_200_000);
        assertEquals(List.of(), counts(), "nothing before the early-fire interval");
        harness.setProcessingTime(EARLY.toMillis());
        assertEquals(List.of(2L), counts());
        assertTrue(harness.numKeyedStateEntries() > 0);

        harness.processWatermark(DAY_END);
        assertEquals(List.of(2L), counts(), "once more when the day closes");
        admin(DAY + 60_000); // late, within the lateness
        harness.setProcessingTime(2 * EARLY.toMillis());
        assertEquals(List.of(3L), counts(), "the full count, never an increment");

        harness.processWatermark(DAY_END + LATENESS.toMillis());
        counts();
        assertEquals(
                0,
                harness.numKeyedStateEntries(),
                "the day's count is dropped once it can no longer change");
        assertEquals(0, harness.numEventTimeTimers());
        assertEquals(0, harness.numProcessingTimeTimers());
        admin(DAY + 120_000); // too late: the stats' dead letter names it (AuditPipeline.rollups)
        harness.setProcessingTime(4 * EARLY.toMillis());
        assertEquals(List.of(), counts());
        assertEquals(0, harness.numKeyedStateEntries());
    }

    @Test
    void theStoredRowBoundsItsDayAndListsTheControls() {
        RollupKey k =
                RollupKey.of(
                        Fixtures.read(
                                event(
                                        "administrator",
                                        List.of("PCI-DSS-10.2.1.2", "SOX-ITGC-ACCESS")),
                                1,
                                DAY));
        UpdateOneModel<Document> upsert =
                (UpdateOneModel<Document>)
                        StoreDocuments.rollup(new RollupRow(k, DAY, 7, null), false);
        Document set = StoreDocumentsTest.written(upsert);
        assertEquals(new Date(DAY), set.get("day"));
        assertEquals(new Date(DAY + 86_400_000L), set.get("day_end"));
        assertEquals(List.of("PCI-DSS-10.2.1.2", "SOX-ITGC-ACCESS"), set.get("controls"));
        assertEquals(7L, set.get("events"));
        assertTrue(
                ((String) ((Document) upsert.getFilter()).get("_id")).startsWith(DAY + "|db-01|"));
        assertTrue(upsert.getOptions().isUpsert());
        // a field the event lacks is left out of the row; no user name makes two keys one id
        AuditEvent anonymous = event("administrator", List.of());
        anonymous.user = null;
        RollupKey none = RollupKey.of(Fixtures.read(anonymous, 1, DAY));
        Document row =
                (Document)
                        ((Document)
                                        ((UpdateOneModel<Document>)
                                                        StoreDocuments.rollup(
                                                                new RollupRow(none, DAY, 1, null),
                                                                false))
                                                .getUpdate())
                                .get("$set");
        assertFalse(row.containsKey("user"));
        AuditEvent empty = event("administrator", List.of());
        empty.user = "";
        RollupKey blank = RollupKey.of(Fixtures.read(empty, 1, DAY));
        AuditEvent piped = event("administrator", List.of());
        piped.user = "dba_bob|administrator";
        piped.principalClass = "administration";
        piped.category = "set_global";
        piped.action = null;
        RollupKey shifted = RollupKey.of(Fixtures.read(piped, 1, DAY));
        RollupKey plain = RollupKey.of(Fixtures.read(event("administrator", List.of()), 1, DAY));
        assertEquals(
                4,
                new java.util.HashSet<>(
                                List.of(
                                        none.idText(),
                                        blank.idText(),
                                        shifted.idText(),
                                        plain.idText()))
                        .size(),
                "no user, an empty one, and one with the old separator in it: four keys, four ids");
    }
}
