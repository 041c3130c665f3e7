package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.auditpipe.flink.lag.KafkaLagReporter;
import io.auditpipe.flink.lag.KafkaLagReporter.PartitionLag;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The lag figures; the sampling against a real Kafka and store runs in the e2e suite
 * (test_dashboard_panels).
 */
class KafkaLagReporterTest {

    @Test
    void lagIsEndMinusCommittedPerPartitionInPartitionOrder() {
        List<PartitionLag> lag =
                KafkaLagReporter.lagOf(Map.of(2, 50L, 0, 100L, 1, 7L), Map.of(0, 60L, 1, 7L));
        assertEquals(
                List.of(
                        new PartitionLag(0, 100, 60, 40),
                        new PartitionLag(1, 7, 7, 0),
                        new PartitionLag(2, 50, 0, 50)),
                lag,
                "partition 2 has no commit yet: all of it is lag");
    }

    @Test
    void lagIsNeverNegative() {
        // a commit ahead of the end offset seen (the end was read first, the commit after a
        // checkpoint)
        assertEquals(
                List.of(new PartitionLag(0, 10, 12, 0)),
                KafkaLagReporter.lagOf(Map.of(0, 10L), Map.of(0, 12L)));
        assertEquals(
                List.of(new PartitionLag(0, 10, 0, 10)),
                KafkaLagReporter.lagOf(Map.of(0, 10L), Map.of(0, -1L)));
    }

    @Test
    void theSampleSumsThePartitionsAndHasADeterministicId() {
        Document d =
                KafkaLagReporter.sampleDocument(
                        "audit.raw",
                        "auditpipe-flink",
                        1_700_000_000_000L,
                        List.of(new PartitionLag(0, 100, 60, 40), new PartitionLag(1, 9, 4, 5)));
        assertEquals("audit.raw/auditpipe-flink/1700000000000", d.get("_id"));
        assertEquals(new Date(1_700_000_000_000L), d.get("at"));
        assertEquals(45L, d.get("lag"));
        assertEquals(2, d.getList("partitions", Document.class).size());
        assertEquals(5L, d.getList("partitions", Document.class).get(1).get("lag"));
    }
}
