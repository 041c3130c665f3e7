package io.auditpipe.flink.sink;

import io.auditpipe.flink.alerts.Alert;
import java.nio.charset.StandardCharsets;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.kafka.clients.producer.ProducerRecord;

/** Alerts on topic audit.alerts: the alert id as key, the alert document (JSON) as value. */
public class AlertKafkaSerializer implements KafkaRecordSerializationSchema<Alert> {
    private static final long serialVersionUID = 1L;

    private final String topic;

    public AlertKafkaSerializer(String topic) {
        this.topic = topic;
    }

    @Override
    public ProducerRecord<byte[], byte[]> serialize(
            Alert alert, KafkaSinkContext context, Long timestamp) {
        return new ProducerRecord<>(
                topic,
                null,
                timestamp,
                alert.id.getBytes(StandardCharsets.UTF_8),
                StoreDocuments.alertJson(alert).getBytes(StandardCharsets.UTF_8));
    }
}
