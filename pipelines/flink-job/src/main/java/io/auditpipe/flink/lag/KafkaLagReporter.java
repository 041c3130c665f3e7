package io.auditpipe.flink.lag;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The job's own Kafka consumer lag, written to the store for the pipeline-health dashboard: every
 * {@code interval} one document {@code {_id, at, topic, group, lag, partitions: [{partition, end,
 * committed, lag}]}} in a small capped collection (created by {@code auditpipe up}).
 *
 * <p>Lag is the topic's end offsets minus the offsets the job's consumer group committed, which the
 * Kafka source commits when a checkpoint completes: records not yet covered by a checkpoint, the
 * same figure {@code auditpipe status} prints (cli/auditpipe/stack/kafka/topics.py {@code
 * consumer_lag}).
 *
 * <p>A sink with no use for its input: it runs as one subtask (the job gives it parallelism 1)
 * beside the chain heads, so it lives and dies with the job on a MiniCluster or a real cluster. The
 * sampling runs on a thread of its own and never fails the job: a sample that cannot be taken or
 * written is logged and the next one tried. Samples are observations, not evidence: a restart
 * neither replays nor dedups them.
 */
public record KafkaLagReporter<T>(
        Map<String, String> kafkaClient,
        String topic,
        String group,
        String storeUri,
        String database,
        String collection,
        long intervalMillis)
        implements Sink<T> {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaLagReporter.class);

    /** {@code kafkaClient}: bootstrap.servers and the client's security settings. */
    public KafkaLagReporter {
        kafkaClient = new HashMap<>(kafkaClient);
    }

    /** One partition's figures. */
    public record PartitionLag(int partition, long end, long committed, long lag) {}

    /**
     * Lag per partition: end minus committed, never negative; a partition the group has not
     * committed yet counts from offset 0 (the source starts from the earliest offset then).
     */
    public static List<PartitionLag> lagOf(Map<Integer, Long> ends, Map<Integer, Long> committed) {
        List<PartitionLag> out = new ArrayList<>();
        for (Map.Entry<Integer, Long> e : new TreeMap<>(ends).entrySet()) {
            long done = Math.max(committed.getOrDefault(e.getKey(), 0L), 0L);
            out.add(
                    new PartitionLag(
                            e.getKey(), e.getValue(), done, Math.max(e.getValue() - done, 0L)));
        }
        return out;
    }

    /** The stored sample. */
    public static Document sampleDocument(
            String topic, String group, long atMillis, List<PartitionLag> partitions) {
        List<Document> parts = new ArrayList<>();
        long total = 0;
        for (PartitionLag p : partitions) {
            parts.add(
                    new Document("partition", p.partition())
                            .append("end", p.end())
                            .append("committed", p.committed())
                            .append("lag", p.lag()));
            total += p.lag();
        }
        return new Document("_id", topic + "/" + group + "/" + atMillis)
                .append("at", new Date(atMillis))
                .append("topic", topic)
                .append("group", group)
                .append("lag", total)
                .append("partitions", parts);
    }

    @Override
    public SinkWriter<T> createWriter(WriterInitContext context) {
        return new Writer<>(this);
    }

    private static final class Writer<T> implements SinkWriter<T> {
        private final KafkaLagReporter<T> settings;
        private final ScheduledExecutorService timer;
        private Admin admin;
        private MongoClient store;

        Writer(KafkaLagReporter<T> settings) {
            this.settings = settings;
            this.timer =
                    Executors.newSingleThreadScheduledExecutor(
                            r -> {
                                Thread t = new Thread(r, "kafka-lag-reporter");
                                t.setDaemon(true);
                                return t;
                            });
            timer.scheduleWithFixedDelay(
                    this::sampleQuietly,
                    settings.intervalMillis,
                    settings.intervalMillis,
                    TimeUnit.MILLISECONDS);
        }

        private void sampleQuietly() {
            try {
                sample();
            } catch (Exception e) {
                LOG.warn(
                        "kafka lag of {} on {}: no sample this time: {}",
                        settings.group,
                        settings.topic,
                        e.toString());
            } catch (Throwable t) {
                LOG.error("kafka lag reporter", t);
            }
        }

        private void sample() throws Exception {
            if (admin == null) {
                Properties p = new Properties();
                p.putAll(settings.kafkaClient);
                p.put("request.timeout.ms", "10000");
                p.put("default.api.timeout.ms", "10000");
                admin = Admin.create(p);
            }
            if (store == null) {
                store = MongoClients.create(settings.storeUri);
            }
            TopicDescription description =
                    admin.describeTopics(List.of(settings.topic))
                            .allTopicNames()
                            .get(10, TimeUnit.SECONDS)
                            .get(settings.topic);
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            description
                    .partitions()
                    .forEach(
                            p ->
                                    latest.put(
                                            new TopicPartition(settings.topic, p.partition()),
                                            OffsetSpec.latest()));
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> endOffsets =
                    admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetAndMetadata> committedOffsets =
                    admin.listConsumerGroupOffsets(settings.group)
                            .partitionsToOffsetAndMetadata()
                            .get(10, TimeUnit.SECONDS);
            Map<Integer, Long> ends = new HashMap<>();
            endOffsets.forEach((tp, info) -> ends.put(tp.partition(), info.offset()));
            Map<Integer, Long> committed = new HashMap<>();
            committedOffsets.forEach(
                    (tp, om) -> {
                        if (om != null && settings.topic.equals(tp.topic())) {
                            committed.put(tp.partition(), om.offset());
                        }
                    });
            MongoCollection<Document> samples =
                    store.getDatabase(settings.database).getCollection(settings.collection);
            samples.insertOne(
                    sampleDocument(
                            settings.topic,
                            settings.group,
                            System.currentTimeMillis(),
                            lagOf(ends, committed)));
        }

        @Override
        public void write(T element, Context context) {
            // the input only ties the reporter to the job; each sample is taken on the timer
        }

        @Override
        public void flush(boolean endOfInput) {}

        @Override
        public void close() throws Exception {
            timer.shutdownNow();
            timer.awaitTermination(15, TimeUnit.SECONDS);
            if (admin != null) {
                admin.close(java.time.Duration.ofSeconds(5));
            }
            if (store != null) {
                store.close();
            }
        }
    }
}
