package io.auditpipe.flink.records;

import io.auditpipe.parser.AuditEvent;

import java.io.Serializable;

/** A normalized event together with the Kafka message it was read from. */
public class IngestedEvent implements Serializable {
    private static final long serialVersionUID = 1L;

    public AuditEvent event;
    public KafkaOrigin origin;

    public IngestedEvent() {}

    public IngestedEvent(AuditEvent event, KafkaOrigin origin) {
        this.event = event;
        this.origin = origin;
    }

    @Override
    public String toString() {
        return "IngestedEvent{" + event + " @ " + origin + "}";
    }
}
