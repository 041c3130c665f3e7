package io.auditpipe.flink.records;

import java.io.Serializable;
import java.util.Objects;

/** Where a message was read: topic, partition, offset and the broker's timestamp. */
public class KafkaOrigin implements Serializable {
    private static final long serialVersionUID = 1L;

    public String topic;
    public int partition;
    public long offset;
    public long timestampMillis;

    public KafkaOrigin() {}

    public KafkaOrigin(String topic, int partition, long offset, long timestampMillis) {
        this.topic = topic;
        this.partition = partition;
        this.offset = offset;
        this.timestampMillis = timestampMillis;
    }

    /** {@code topic/partition/offset}: unique per message, and the same on every replay. */
    public String coordinates() {
        return topic + "/" + partition + "/" + offset;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof KafkaOrigin)) return false;
        KafkaOrigin k = (KafkaOrigin) o;
        return partition == k.partition
                && offset == k.offset
                && timestampMillis == k.timestampMillis
                && Objects.equals(topic, k.topic);
    }

    @Override
    public int hashCode() {
        return Objects.hash(topic, partition, offset);
    }

    @Override
    public String toString() {
        return coordinates();
    }
}
