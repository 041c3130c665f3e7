package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.StatsEvent;
import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.functions.MapFunction;

/**
 * An event that arrived after its minute's allowed lateness: it is in the events collection, but
 * its minute's count can no longer change. Recorded as a dead letter of stage "stats" so the gap
 * between events and stats is visible and explained, never silent.
 */
public class TooLateForStats implements MapFunction<StatsEvent, DeadLetter> {
    private static final long serialVersionUID = 1L;

    @Override
    public DeadLetter map(StatsEvent e) {
        // a sum is never late at the window (PreCountStats); should one be, its dead letter says
        // how many it stands for
        String which =
                e.count == 1
                        ? "event "
                                + e.id
                                + " arrived after the allowed lateness of its minute; it is"
                        : "event "
                                + e.id
                                + " and "
                                + (e.count - 1)
                                + " more of its key arrived after the allowed lateness of"
                                + " their minute; they are";
        DeadLetter d =
                DeadLetter.of(
                        DeadLetter.STAGE_STATS,
                        which
                                + " stored in the events collection but not counted in the one-minute stats",
                        null,
                        e.id.getBytes(StandardCharsets.UTF_8),
                        e.origin);
        d.server = e.key.server;
        d.format = e.format;
        d.sourceFile = e.sourceFile;
        return d;
    }
}
