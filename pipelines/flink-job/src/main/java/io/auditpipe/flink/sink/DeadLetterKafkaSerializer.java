package io.auditpipe.flink.sink;

import io.auditpipe.flink.records.DeadLetter;

import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.kafka.clients.producer.ProducerRecord;

/** Dead letters on the topic: the original key as key, the dead-letter JSON as value. */
public class DeadLetterKafkaSerializer implements KafkaRecordSerializationSchema<DeadLetter> {
    private static final long serialVersionUID = 1L;

    private final String topic;

    public DeadLetterKafkaSerializer(String topic) {
        this.topic = topic;
    }

    @Override
    public ProducerRecord<byte[], byte[]> serialize(DeadLetter element, KafkaSinkContext context, Long timestamp) {
        return new ProducerRecord<>(topic, null, timestamp, element.originalKey, StoreDocuments.deadLetterJson(element));
    }
}
