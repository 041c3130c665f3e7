package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.flink.archive.EventArchive;
import io.auditpipe.flink.records.ParsedRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.jobgraph.IntermediateDataSet;
import org.apache.flink.runtime.jobgraph.JobEdge;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.NonChainedOutput;
import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.junit.jupiter.api.Test;

/**
 * How long each hand-over between the job's tasks holds a partly filled buffer (AuditPipeline's
 * buffer timeouts): the promised paths at Flink's default, the alerts at once, the rest at a
 * second.
 */
class BufferTimeoutsTest {
    private static final long FLINK_DEFAULT_MS = 100;

    /**
     * Every hand-over between two tasks of the live job: "operator -> the task it sends to" to its
     * buffer timeout.
     */
    private static Map<String, Long> handOvers() {
        Configuration options = Fixtures.options();
        DataGeneratorSource<ParsedRecord> source =
                new DataGeneratorSource<>(i -> null, 1, TypeInformation.of(ParsedRecord.class));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        new AuditPipeline(
                        options,
                        new PipelineSources(source, source),
                        PipelineSinks.builder()
                                .events(new CollectingSink<>("t-events"))
                                .evidence(new CollectingSink<>("t-evidence"))
                                .stats(new CollectingSink<>("t-stats"))
                                .statsHourly(new CollectingSink<>("t-hours"))
                                .rollups(new CollectingSink<>("t-rollups"))
                                .deadLetters(new CollectingSink<>("t-dead-letters"))
                                .alerts(new CollectingSink<>("t-alerts"))
                                .chainHeads(new CollectingSink<>("t-heads"))
                                .kafkaLag(new CollectingSink<>("t-lag"))
                                .sessions(new CollectingSink<>("t-sessions"))
                                .archive(
                                        EventArchive.events("file:///unused"),
                                        EventArchive.chainHeads("file:///unused"))
                                .build())
                .build(env);
        StreamGraph graph = env.getStreamGraph();
        JobGraph job = graph.getJobGraph();
        Map<String, Long> out = new TreeMap<>();
        ClassLoader loader = BufferTimeoutsTest.class.getClassLoader();
        for (JobVertex vertex : job.getVertices()) {
            for (NonChainedOutput output :
                    new StreamConfig(vertex.getConfiguration())
                            .getVertexNonChainedOutputs(loader)) {
                String from = graph.getStreamNode(output.getSourceNodeId()).getOperatorName();
                long timeout =
                        output.getBufferTimeout() < 0
                                ? FLINK_DEFAULT_MS
                                : output.getBufferTimeout();
                for (IntermediateDataSet data : vertex.getProducedDataSets()) {
                    if (!data.getId().equals(output.getDataSetId())) continue;
                    for (JobEdge edge : data.getConsumers()) {
                        out.put(from + " -> " + edge.getTarget().getName(), timeout);
                    }
                }
            }
        }
        return out;
    }

    private static List<String> matching(Map<String, Long> handOvers, String part, long timeout) {
        List<String> wrong = new ArrayList<>();
        handOvers.forEach(
                (edge, t) -> {
                    if (edge.contains(part) && t != timeout)
                        wrong.add(edge + " waits " + t + " ms");
                });
        return wrong;
    }

    @Test
    void thePromisedPathsWaitFlinksDefaultTheAlertsNothingTheRestASecond() {
        Map<String, Long> handOvers = handOvers();
        assertTrue(
                handOvers.keySet().stream().anyMatch(e -> e.contains("-> first-copies-in-chain")),
                handOvers.toString());
        // the events to their chain, the records to the alert rules: Flink's default
        assertEquals(List.of(), matching(handOvers, "-> first-copies-in-chain", FLINK_DEFAULT_MS));
        assertEquals(
                List.of(), matching(handOvers, "-> alert-logins-per-account", FLINK_DEFAULT_MS));
        assertEquals(List.of(), matching(handOvers, "-> alert-record-gaps", FLINK_DEFAULT_MS));
        assertEquals(
                List.of(), matching(handOvers, "-> alert-learned-baselines", FLINK_DEFAULT_MS));
        // the alerts: at once, from every rule to each-alert-once and from it to the store's writer
        assertEquals(List.of(), matching(handOvers, "-> each-alert-once", 0));
        assertEquals(List.of(), matching(handOvers, "-> store-alerts", 0));
        assertEquals(List.of(), matching(handOvers, "-> store-learned-alerts", 0));
        assertEquals(List.of(), matching(handOvers, "-> alert-sequence-starts", 0));
        assertTrue(
                handOvers.keySet().stream().filter(e -> e.endsWith("-> each-alert-once")).count()
                        >= 6,
                handOvers.toString());
        // the archive's writer is chained to the chain: no hand-over, it reads the document the
        // chain built
        assertTrue(
                handOvers.keySet().stream()
                        .anyMatch(
                                e ->
                                        e.contains("first-copies-in-chain -> (")
                                                && e.contains("archive-events: Writer")),
                handOvers.toString());
        // what waits for a window or a checkpoint anyway, or is promised nothing: a second
        for (String unhurried :
                List.of(
                        "-> stats-1m",
                        "-> stats-1h",
                        "-> rollups-1d",
                        "-> sessions",
                        "-> kafka-lag",
                        "first-copies-in-chain -> store-dead-letters",
                        "too-late-for-stats -> store-dead-letters")) {
            assertTrue(
                    handOvers.keySet().stream().anyMatch(e -> e.contains(unhurried)),
                    unhurried + " in " + handOvers);
            assertEquals(
                    List.of(),
                    matching(handOvers, unhurried, AuditPipeline.UNHURRIED_BUFFER_TIMEOUT_MS));
        }
        // each hand-over with a wait above zero has a thread that wakes at it: those at Flink's
        // default are the promised ones
        long atDefault = handOvers.values().stream().filter(t -> t == FLINK_DEFAULT_MS).count();
        assertTrue(
                atDefault <= 10,
                atDefault + " hand-overs at " + FLINK_DEFAULT_MS + " ms: " + handOvers);
    }
}
