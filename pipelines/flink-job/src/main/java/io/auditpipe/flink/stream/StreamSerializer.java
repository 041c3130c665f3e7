package io.auditpipe.flink.stream;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.apache.flink.connector.kafka.lineage.DefaultKafkaDatasetFacet;
import org.apache.flink.connector.kafka.lineage.DefaultKafkaDatasetIdentifier;
import org.apache.flink.connector.kafka.lineage.KafkaDatasetFacet;
import org.apache.flink.connector.kafka.lineage.KafkaDatasetFacetProvider;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A stream message as a Kafka record: its topic, its id as key, its event time as the record's
 * timestamp. Names the topics it writes: the sink's transactions are reused (POOLING), and after a
 * restart it finds the ones it left open by them.
 */
public class StreamSerializer
        implements KafkaRecordSerializationSchema<StreamMessage>, KafkaDatasetFacetProvider {
    private static final long serialVersionUID = 1L;

    private final List<String> topics;

    public StreamSerializer(List<String> topics) {
        this.topics = List.copyOf(topics);
    }

    @Override
    public ProducerRecord<byte[], byte[]> serialize(
            StreamMessage m, KafkaSinkContext context, Long timestamp) {
        ProducerRecord<byte[], byte[]> r =
                new ProducerRecord<>(
                        m.topic,
                        null,
                        m.timestampMillis,
                        m.key.getBytes(StandardCharsets.UTF_8),
                        m.value);
        if (m.truncated != null) {
            r.headers()
                    .add(
                            StreamMessage.TRUNCATED_HEADER,
                            m.truncated.getBytes(StandardCharsets.UTF_8));
        }
        return r;
    }

    @Override
    public Optional<KafkaDatasetFacet> getKafkaDatasetFacet() {
        return Optional.of(
                new DefaultKafkaDatasetFacet(DefaultKafkaDatasetIdentifier.ofTopics(topics)));
    }
}
