package io.auditpipe.flink.records;

import java.io.Serializable;

/** What the source emits for each Kafka message: an event or a dead letter, exactly one of them. */
public class ParsedRecord implements Serializable {
    private static final long serialVersionUID = 1L;

    public IngestedEvent event;
    public DeadLetter deadLetter;

    /**
     * No record the source gives after this one has an earlier stream time ({@link
     * #eventTimeMillis}); Long.MIN_VALUE where the source cannot know (Kafka). Imported history
     * knows it from reading its files first ({@code TimeFloors}), and its watermark follows it
     * ({@code FloorWatermarks}). Read in the source's own thread only: it never crosses a
     * hand-over.
     */
    public transient long laterNotBefore = Long.MIN_VALUE;

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

    /**
     * The stream timestamp: the audit record's own time when trusted, else the time it was shipped
     * (Kafka's timestamp), which is also what dead letters get. Watermarks follow trusted event
     * time only ({@link io.auditpipe.flink.functions.TrustedEventTimeWatermarks}).
     */
    public long eventTimeMillis() {
        return event != null ? event.streamTimeMillis() : deadLetter.origin.timestampMillis;
    }

    /** Whether this record may move the watermark: a parsed event whose own time is trusted. */
    public boolean drivesWatermark() {
        return event != null && event.eventTimeTrusted;
    }
}
