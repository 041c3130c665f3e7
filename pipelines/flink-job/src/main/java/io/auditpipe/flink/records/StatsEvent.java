package io.auditpipe.flink.records;

import java.io.Serializable;

/**
 * What the one-minute stats need of an event: its key (server, user, event name, command class,
 * status) and, should it come too late for its minute, what its dead letter names (id, format,
 * file, Kafka origin). This, not the whole event with its original line and lists, is what crosses
 * the shuffle to the stats window: a POJO of strings and numbers that Flink serializes field by
 * field. Its time travels as the stream record's timestamp. {@code count} is how many events of one
 * key and minute it stands for ({@code PreCountStats} adds them up before the shuffle); a record
 * too late for its minute always stands for itself alone, so that its dead letter names it.
 */
public class StatsEvent implements Serializable {
    private static final long serialVersionUID = 1L;

    public StatsKey key;
    public String id;
    public String format;
    public String sourceFile;
    public KafkaOrigin origin;
    public long count = 1;

    public StatsEvent() {}

    public static StatsEvent of(IngestedEvent e) {
        StatsEvent s = new StatsEvent();
        s.key = StatsKey.of(e.event);
        s.id = e.event.id;
        s.format = e.event.format;
        s.sourceFile = e.event.sourceFile;
        s.origin = e.origin;
        return s;
    }
}
