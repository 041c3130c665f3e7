package io.auditpipe.flink.sink;

import io.auditpipe.flink.records.DeadLetter;
import java.util.Arrays;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Dead letters on the topic: the original key as key, the dead-letter JSON as value. Every record
 * fits {@code maxMessageBytes} (the producer's max.request.size and the topic's max.message.bytes,
 * both derived from max_line_size by the CLI): a record the broker refuses would fail the job, and
 * the replay from its checkpoint would fail the same way, for ever.
 */
public record DeadLetterKafkaSerializer(String topic, int maxMessageBytes)
        implements KafkaRecordSerializationSchema<DeadLetter> {
    /** Room for the record's framing and headers within the limit. */
    static final int RECORD_OVERHEAD = 1024;

    @Override
    public ProducerRecord<byte[], byte[]> serialize(
            DeadLetter element, KafkaSinkContext context, Long timestamp) {
        byte[] key = element.originalKey;
        if (key != null && key.length > StoreDocuments.TEXT_EXCERPT_BYTES) {
            key =
                    Arrays.copyOf(
                            key,
                            StoreDocuments
                                    .TEXT_EXCERPT_BYTES); // keys are small; a broken one is cut
        }
        int budget = maxMessageBytes - RECORD_OVERHEAD - (key == null ? 0 : key.length);
        return new ProducerRecord<>(
                topic, null, timestamp, key, StoreDocuments.deadLetterJson(element, budget));
    }
}
