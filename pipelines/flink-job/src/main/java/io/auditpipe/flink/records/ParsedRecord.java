package io.auditpipe.flink.records;

import java.io.Serializable;

/** What the source emits for each Kafka message: an event or a dead letter, exactly one of them. */
public class ParsedRecord implements Serializable {
    private static final long serialVersionUID = 1L;

    public IngestedEvent event;
    public DeadLetter deadLetter;

    public ParsedRecord() {}

    public static ParsedRecord event(IngestedEvent e) {
        ParsedRecord r = new ParsedRecord();
        r.event = e;
        return r;
    }

    public static ParsedRecord deadLetter(DeadLetter d) {
        ParsedRecord r = new ParsedRecord();
        r.deadLetter = d;
        return r;
    }

    /** Event time for watermarks: the audit record's own time, or the broker's for dead letters. */
    public long eventTimeMillis() {
        return event != null ? event.event.eventTimeMillis : deadLetter.origin.timestampMillis;
    }
}
